// The labelled set of issue 19: real text in seven languages, and for each query the messages
// it must find and those it must not. Recall and precision must both be 1 on both databases.

/** Messages by key. */
export const MESSAGES: Record<string, string> = {
  en1: 'The quarterly report is ready for review.',
  en2: 'Reporting bugs early saves time.',
  en3: 'Please REVIEW the deployment plan before Friday!',
  fr1: 'On se retrouve au café crème près de la gare à Noël ?',
  fr2: 'Le cafe est fermé le lundi.',
  fr3: 'Élève motivé cherche stage.',
  de1: 'Die Straße ist wegen Bauarbeiten gesperrt.',
  de2: 'Größe und Gewicht stehen auf der Verpackung.',
  de3: 'Wir treffen uns ÜBER dem Laden, Strasse 5.',
  ja1: '来週東京都に行く予定です。',
  ja2: '京都の紅葉がきれいでした。',
  ja3: 'データベースのバックアップを取りました。',
  ja4: 'iPhoneを買ったけど、まだ使い方がわからない。',
  zh1: '我明天去北京大学开会。',
  zh2: '北京的天气今天很好。',
  zh3: '他在南京大学读书。',
  tw1: '我們下週去臺灣旅行。',
  tw2: '這個資料庫的效能很好。',
  ko1: '서울에서 친구를 만났어요.',
  ko2: '부산에서 서울까지 기차로 갔어요.',
  ko3: '회의는 내일 오전 열 시입니다.',
  // Words that are FTS5 operators when bare, and a quote inside a word.
  op1: 'Now or NEVER, not near the "end" of it.',
};

/** Each query, the messages it must find (all others must not be found). */
export const QUERIES: Array<{ query: string; expect: string[] }> = [
  // English: by word, case folded, every word must match; stems find inflections.
  { query: 'report', expect: ['en1', 'en2'] },
  { query: 'review', expect: ['en1', 'en3'] },
  { query: 'REVIEW plan', expect: ['en3'] },
  { query: 'reporting', expect: ['en1', 'en2'] },
  { query: '"reporting"', expect: ['en2'] },
  // French: accents folded both ways.
  { query: 'cafe', expect: ['fr1', 'fr2'] },
  { query: 'Café crème', expect: ['fr1'] },
  { query: 'noel', expect: ['fr1'] },
  { query: 'eleve', expect: ['fr3'] },
  // German: ß folds to ss, umlauts lose their dots.
  { query: 'strasse', expect: ['de1', 'de3'] },
  { query: 'Straße', expect: ['de1', 'de3'] },
  { query: 'grosse', expect: ['de2'] },
  { query: 'uber', expect: ['de3'] },
  // Japanese: any substring of two characters or more.
  { query: '東京', expect: ['ja1'] },
  { query: '京都', expect: ['ja1', 'ja2'] },
  { query: '東京都', expect: ['ja1'] },
  { query: 'データ', expect: ['ja3'] },
  { query: 'iphone', expect: ['ja4'] },
  { query: '買った', expect: ['ja4'] },
  // Chinese, simplified and traditional.
  { query: '北京', expect: ['zh1', 'zh2'] },
  { query: '北京大学', expect: ['zh1'] },
  { query: '大学', expect: ['zh1', 'zh3'] },
  { query: '臺灣', expect: ['tw1'] },
  { query: '資料庫', expect: ['tw2'] },
  { query: '很好', expect: ['zh2', 'tw2'] },
  // Korean.
  { query: '서울', expect: ['ko1', 'ko2'] },
  { query: '서울에서', expect: ['ko1'] },
  { query: '회의', expect: ['ko3'] },
  // Mixed scripts, and terms from two languages at once (AND).
  { query: '北京 很好', expect: ['zh2'] },
  { query: 'cafe 東京', expect: [] },
  // FTS5's operators and quotes are plain words in a query.
  { query: 'or not', expect: ['op1'] },
  { query: 'NEAR "end"', expect: ['op1'] },
  { query: 'never AND now', expect: [] },
];
