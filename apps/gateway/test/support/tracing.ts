import { startTracing, type Tracing } from '@platform/service-kit';
import { type OtlpReceiver, startOtlpReceiver } from '@platform/testing';
import { type AiHarness, startAiHarness } from './ai-harness';

/** The AI harness listening, with the real OpenTelemetry SDK exporting to an OTLP receiver. */
export type TracedHarness = {
  receiver: OtlpReceiver;
  tracing: Tracing | undefined;
  h: AiHarness;
  url: string;
};

/**
 * Starts an OTLP/HTTP (JSON) receiver, the SDK from the standard OTEL_* variables (always
 * sampled, a 20 ms batch delay, plus `extraEnv`) and the AI harness listening on loopback.
 */
export async function startTracedHarness(extraEnv: Record<string, string> = {}): Promise<TracedHarness> {
  const receiver = await startOtlpReceiver();
  const env = {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_TRACES_SAMPLER: 'always_on',
    OTEL_BSP_SCHEDULE_DELAY: '20',
    ...extraEnv,
  };
  // The SDK reads the standard variables from the process (Jest gives each file its own copy).
  Object.assign(process.env, env);
  const tracing = startTracing({ service: 'gateway', env });
  const h = await startAiHarness({});
  const url = (await h.listen()).url;
  return { receiver, tracing, h, url };
}

/** Stops what startTracedHarness started (any part may be missing after a failed start). */
export async function stopTracedHarness(t: Partial<TracedHarness>): Promise<void> {
  await t.h?.close();
  await t.tracing?.shutdown();
  await t.receiver?.close();
}
