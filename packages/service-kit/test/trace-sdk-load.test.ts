import * as api from '@opentelemetry/api';
import { startTraceSdk } from '../src/trace-sdk';

// Its own file: Jest's module registry is per file, so nothing else here has loaded sdk-node.
describe('what starting the SDK loads', () => {
  const loaded = () => Object.keys(require.cache).some((k) => k.includes('@opentelemetry/sdk-node'));
  const stop = async (sdk: { shutdown(): Promise<void> }) => {
    await sdk.shutdown();
    api.trace.disable();
    api.context.disable();
    api.propagation.disable();
  };

  it('the pieces load no part of sdk-node; a choice they leave to it loads it', async () => {
    const base = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' };
    await stop(startTraceSdk('gateway', base, api));
    expect(loaded()).toBe(false);
    const b3 = { ...base, OTEL_PROPAGATORS: 'b3' };
    const saved = process.env.OTEL_PROPAGATORS;
    process.env.OTEL_PROPAGATORS = 'b3';
    try {
      const sdk = startTraceSdk('gateway', b3, api);
      expect(loaded()).toBe(true);
      expect(api.propagation.fields()).toEqual(['b3']);
      await stop(sdk);
    } finally {
      if (saved === undefined) delete process.env.OTEL_PROPAGATORS;
      else process.env.OTEL_PROPAGATORS = saved;
    }
  });
});
