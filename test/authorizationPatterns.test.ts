/**
 * An authorization rule `messageKey="*Light*On*"` against long keys: the answer is immediate and the
 * hub keeps answering others meanwhile (a backtracking matcher once held the event loop for 9 s).
 */
import { describe, expect, it } from 'vitest';
import { consumer, get, hubsStoppedAfterEach, post, testConfiguration } from './support/testHub.js';
import { storedStateOf } from './support/storedState.js';

const hub = hubsStoppedAfterEach();

function restrictedConfiguration() {
  const config = testConfiguration();
  const dev = config.credentials.find((c) => c.name === 'Dev');
  if (!dev) throw new Error('no Dev credential');
  dev.authorizations = {
    ...dev.authorizations,
    messages: {
      defaultAuthorization: 'Deny',
      rules: [{ id: '1', authorization: 'Allow', scope: '*', args: '*', messageKey: '*Light*On*' }],
    },
  };
  return config;
}

describe('authorization patterns', () => {
  it('long keys against *Light*On*: a 403 or 400 at once while /health keeps answering, nothing stored', async () => {
    const h = await hub({ config: restrictedConfiguration() });
    const stored = storedStateOf(h.dataDir);
    expect((await get(h, 'consumer/SendMessage', consumer(), { scope: 'All', key: 'KitchenLightOn' })).status).toBe(
      204,
    );
    expect((await get(h, 'consumer/SendMessage', consumer(), { scope: 'All', key: 'KitchenLightOff' })).status).toBe(
      403,
    );
    const before = stored.digest();

    // The longest key a request may carry, built to make a backtracking matcher work hardest.
    const longest = 'Light'.repeat(204);
    // A 160 KB key: refused by the name rule before any matching.
    const huge = 'Light'.repeat(32 * 1024);
    let healthAnswers = 0;
    let sending = true;
    const health = (async () => {
      while (sending) {
        const response = await fetch(`${h.url}/health`);
        if (response.status === 200) healthAnswers++;
        await response.text();
      }
    })();
    const refused = await Promise.all([
      ...Array.from({ length: 20 }, () =>
        post(h, 'consumer/SendMessage', consumer(), { Scope: { Scope: 'All' }, Key: longest }),
      ),
      post(h, 'consumer/SendMessage', consumer(), { Scope: { Scope: 'All' }, Key: huge }),
    ]);
    sending = false;
    await health;
    expect(refused.slice(0, 20).map((r) => r.status)).toEqual(Array(20).fill(403));
    expect(refused[0].json()).toMatchObject({ Message: 'This message is not authorized.' });
    expect(refused[20].status).toBe(400);
    expect(refused[20].json<{ Message: string }>().Message).toMatch(/Key must be at most 1024 characters/);
    expect(healthAnswers).toBeGreaterThan(0);
    expect(stored.digest()).toBe(before);
    stored.close();
  });
});
