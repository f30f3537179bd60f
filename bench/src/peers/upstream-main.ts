import { type OpenAIBehaviour, startOpenAIFake } from '@platform/testing';
import { trimRequestLog } from '../targets/listen';

// The OpenAI-compatible fake of @platform/testing in a process of its own, so
// neither gateway shares an event loop with it. argv[2]: the behaviour as JSON.
// Reports { url, baseURL } over IPC; answers 'count' with the requests served.
export type UpstreamInfo = { url: string; baseURL: string };
export type UpstreamCount = { type: 'count'; requests: number };

async function main(): Promise<void> {
  const behaviour = JSON.parse(process.argv[2] ?? '{}') as OpenAIBehaviour;
  const fake = await startOpenAIFake({ behaviour });
  const log = trimRequestLog(fake.requests);
  process.on('message', (message) => {
    if (message === 'count') process.send?.({ type: 'count', requests: log.count() } satisfies UpstreamCount);
  });
  process.on('SIGTERM', () => {
    log.stop();
    void fake.close().then(() => process.exit(0));
  });
  process.send?.({ url: fake.url, baseURL: fake.baseURL } satisfies UpstreamInfo);
}

void main();
