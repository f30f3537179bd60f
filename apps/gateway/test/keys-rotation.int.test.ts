import request from 'supertest';
import { type AiHarness, newMasterKey, SERVER_KEYS, startAiHarness } from './support/ai-harness';

const OLD = newMasterKey('old');
const NEW = newMasterKey('new');

let h: AiHarness;

beforeAll(async () => {
  h = await startAiHarness({ PROVIDER_KEYS_MASTER_KEYS: OLD });
});
afterAll(async () => {
  await h.close();
});

function chat(app: AiHarness['app'], apiKey: string) {
  return request(app)
    .post('/api/v1/ai/chat/completions')
    .set('x-api-key', apiKey)
    .send({ lane: 'free', project_id: 'rot', messages: [{ role: 'user', content: 'hi' }] });
}

async function masterKeyIdsOf(userId: string): Promise<Record<string, string>> {
  const rows = await h.prisma.providerKey.findMany({
    where: { userId },
    select: { provider: true, masterKeyId: true },
  });
  return Object.fromEntries(rows.map((r) => [r.provider, r.masterKeyId]));
}

describe('master key rotation', () => {
  it('rows written under the old key still decrypt after the list becomes new,old; new rows use the new key', async () => {
    const caller = await h.createCaller();
    const oldRowKey = 'sk-rotation-old-row-0123456789';
    const stored = await request(h.app)
      .post('/api/v1/keys')
      .set('x-api-key', caller.apiKey)
      .send({ provider: 'groq', key: oldRowKey });
    expect(stored.status).toBe(201);
    expect(await masterKeyIdsOf(caller.userId)).toEqual({ groq: 'old' });

    // The "restart" with the rotated list: a new app instance (fresh caches) on the same database.
    const rotated = h.startInstance({ PROVIDER_KEYS_MASTER_KEYS: `${NEW},${OLD}` });
    h.resetFakes();
    expect((await chat(rotated, caller.apiKey)).status).toBe(200);
    expect(h.openaiRequests()[0]?.headers.authorization).toBe(`Bearer ${oldRowKey}`);

    const newRowKey = 'sk-rotation-new-row-0123456789';
    await request(rotated)
      .post('/api/v1/keys')
      .set('x-api-key', caller.apiKey)
      .send({ provider: 'openai', key: newRowKey });
    expect(await masterKeyIdsOf(caller.userId)).toEqual({ groq: 'old', openai: 'new' });

    // Re-saving a key re-encrypts it under the current master key, which is how old rows are migrated.
    await request(rotated)
      .post('/api/v1/keys')
      .set('x-api-key', caller.apiKey)
      .send({ provider: 'groq', key: oldRowKey });
    expect(await masterKeyIdsOf(caller.userId)).toEqual({ groq: 'new', openai: 'new' });
    const newOnly = h.startInstance({ PROVIDER_KEYS_MASTER_KEYS: NEW });
    h.resetFakes();
    expect((await chat(newOnly, caller.apiKey)).status).toBe(200);
    expect(h.openaiRequests()[0]?.headers.authorization).toBe(`Bearer ${oldRowKey}`);
  });

  it('a row whose master key was removed is skipped (server key used) and reported without secrets', async () => {
    const caller = await h.createCaller();
    const key = 'sk-rotation-orphan-0123456789';
    await request(h.app).post('/api/v1/keys').set('x-api-key', caller.apiKey).send({ provider: 'groq', key });
    const withoutOld = h.startInstance({ PROVIDER_KEYS_MASTER_KEYS: NEW });
    h.resetFakes();
    expect((await chat(withoutOld, caller.apiKey)).status).toBe(200);
    expect(h.openaiRequests()[0]?.headers.authorization).toBe(`Bearer ${SERVER_KEYS.GROQ_API_KEY}`);
    const report = h.logs.lines.map((l) => JSON.parse(l)).find((l) => l.master_key_id === 'old');
    expect(report?.msg).toMatch(/cannot be decrypted/);
    expect(h.logs.text()).not.toContain(key);
  });
});
