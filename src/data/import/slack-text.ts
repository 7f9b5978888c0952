// Slack's message markup ("mrkdwn") to svc's text: Slack writes links, mentions and the three
// escaped characters in angle brackets (api.slack.com, "Formatting text for app surfaces").

export interface SlackText {
  /** The text, with people as `<@userId>` tokens the writer turns into `@username`. */
  text: string;
  /** The user ids the text mentions. */
  mentions: string[];
}

const ANGLE = /<([^<>]*)>/g;

/**
 * Converts one message text. `channelName` names a channel by id for `<#C123>` written without
 * its name.
 */
export function convertSlackText(raw: string, channelName: (id: string) => string | null): SlackText {
  const mentions = new Set<string>();
  const text = raw.replace(ANGLE, (whole, inner: string) => {
    const bar = inner.indexOf('|');
    const target = bar === -1 ? inner : inner.slice(0, bar);
    const label = bar === -1 ? null : inner.slice(bar + 1);
    if (target.startsWith('@')) {
      const id = target.slice(1);
      mentions.add(id);
      return `<@${id}>`;
    }
    if (target.startsWith('#')) {
      const name = label ?? channelName(target.slice(1));
      return name ? `#${name}` : whole;
    }
    if (target.startsWith('!')) {
      const command = target.slice(1);
      if (command === 'here' || command === 'channel' || command === 'everyone') return `@${command}`;
      // `<!subteam^S123|@team>`, `<!date^1392734382^{date}|Feb 18>`: their fallback text.
      return label ?? '';
    }
    if (/^(?:https?|mailto|ftp):/i.test(target)) {
      const url = target;
      if (label === null || label === url || `mailto:${label}` === url) {
        return url.replace(/^mailto:/i, '');
      }
      return `[${label}](${url})`;
    }
    return whole;
  });
  return { text: unescape(text), mentions: [...mentions] };
}

function unescape(text: string): string {
  return text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}
