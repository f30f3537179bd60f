import { execFileSync } from 'node:child_process';
import path from 'node:path';

/**
 * In real Node processes, not Jest's module registry (which require.cache does not
 * reach): one loads prom-client as it is, one with the stand-in first. The built
 * modules (dist/, made by the build the test task depends on) are what the services load.
 */
const shim = path.resolve(__dirname, '../dist/lazy-otel-api.js');
const otelApi = path.resolve(__dirname, '../dist/otel-api.js');

type Seen = {
  apiModules: number;
  metricsOk: boolean;
  afterReal?: { apiModules: number; same: boolean; forwards: boolean; exemplars: boolean };
};

function inNode(withShim: boolean): Seen {
  const script = `
    if (${withShim}) require(${JSON.stringify(shim)});
    const client = require('prom-client');
    const apiModules = () => Object.keys(require.cache).filter((k) => k.includes('/@opentelemetry/api/')).length;
    const registry = new client.Registry();
    client.collectDefaultMetrics({ register: registry });
    (async () => {
      const text = await registry.metrics();
      const seen = { apiModules: apiModules(), metricsOk: text.includes('process_cpu_seconds_total') };
      if (${withShim}) {
        const real = require(${JSON.stringify(otelApi)}).realOtelApi();
        const exemplars = new client.Registry();
        exemplars.setContentType(client.Registry.OPENMETRICS_CONTENT_TYPE);
        // prom-client reads the API (through the stand-in) only for exemplars.
        client.collectDefaultMetrics({ register: exemplars, enableExemplars: true });
        const text2 = await exemplars.metrics();
        seen.afterReal = {
          apiModules: apiModules(),
          same: require('@opentelemetry/api') === real,
          forwards: typeof real.trace.getTracer === 'function' && real.context.active() !== undefined,
          exemplars: text2.includes('process_cpu_seconds_total'),
        };
      }
      process.stdout.write(JSON.stringify(seen));
    })();
  `;
  const out = execFileSync(process.execPath, ['-e', script], { cwd: __dirname, encoding: 'utf8' });
  return JSON.parse(out) as Seen;
}

describe('the OpenTelemetry API prom-client loads, loaded when used', () => {
  const real = inNode(false);
  const lazy = inNode(true);

  it('prom-client and its default metrics work without loading the API, which they load otherwise', () => {
    expect(real.apiModules).toBeGreaterThan(20);
    expect(real.metricsOk).toBe(true);
    // Only the stand-in's cache entry.
    expect(lazy.apiModules).toBe(1);
    expect(lazy.metricsOk).toBe(true);
  });

  it('realOtelApi loads the real API, which every later require gets and prom-client reads through the stand-in', () => {
    expect(lazy.afterReal).toEqual({
      apiModules: real.apiModules,
      same: true,
      forwards: true,
      exemplars: true,
    });
  });
});
