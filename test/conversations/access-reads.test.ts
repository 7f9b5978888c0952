import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createTestApp, TEST_DB, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';

import { expectCode, recordQueries, sendRaw, sharedChannel } from './_helpers.js';

// Every write and read of a conversation starts with the caller's access to it, read afresh. On
// PostgreSQL the accesses of requests that arrive together are read in one statement
// (src/db/statements/batched-reads.ts): each request must still get its own answer, for its own
// conversation and as its own caller.
describe(`access reads of requests that arrive together (${TEST_DB})`, () => {
  let t: TestApp;
  let owners: Agent[];
  let guest: Agent;
  let channels: string[];

  beforeAll(async () => {
    t = await createTestApp();
    owners = [];
    for (let i = 0; i < 5; i++) owners.push(await signUpAndIn(t, { username: `owner${i}` }));
    guest = await signUpAndIn(t, { username: 'guestreader' });
    channels = [];
    // The guest is a member of the first workspace only.
    for (let i = 0; i < owners.length; i++) {
      channels.push(await sharedChannel(t, owners[i]!, i === 0 ? [guest] : [], `Access ${i}`));
    }
  });
  afterAll(async () => {
    await t?.close();
  });

  const accessReads = (texts: string[]) =>
    texts.filter((s) => /from "conversation" as "c"|inner join "conversation" as "c"/.test(s));

  it('stores each message in its own conversation, by its own sender', async () => {
    let answers: Array<{ body: Record<string, any> }> = [];
    const texts = await recordQueries(async () => {
      answers = await Promise.all(
        owners.map((o, i) => sendRaw(t, o, channels[i]!, `from owner ${i}`)),
      );
    });
    answers.forEach((a, i) => {
      expect(a.body.errors).toBeUndefined();
      expect(a.body.data.sendMessage).toMatchObject({
        conversationId: channels[i],
        author: { id: owners[i]!.id },
        text: `from owner ${i}`,
      });
    });
    if (TEST_DB === 'postgres') expect(accessReads(texts).length).toBeLessThan(owners.length);
    else expect(accessReads(texts)).toHaveLength(owners.length);
  });

  it('refuses the one caller without access while the others of the moment go on', async () => {
    const answers = await Promise.all([
      // The guest belongs to the first workspace only: the others' channels are not found.
      sendRaw(t, guest, channels[0]!, 'mine to send'),
      sendRaw(t, guest, channels[1]!, 'not mine'),
      sendRaw(t, owners[1]!, channels[1]!, 'owner of this one'),
      sendRaw(t, guest, channels[2]!, 'not mine either'),
      sendRaw(t, owners[2]!, channels[2]!, 'owner of that one'),
    ]);
    expect(answers[0]!.body.errors).toBeUndefined();
    expectCode(answers[1]!, 'NOT_FOUND');
    expect(answers[2]!.body.data?.sendMessage.author.id).toBe(owners[1]!.id);
    expectCode(answers[3]!, 'NOT_FOUND');
    expect(answers[4]!.body.data?.sendMessage.author.id).toBe(owners[2]!.id);
  });
});
