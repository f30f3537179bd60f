import { readFileSync } from 'node:fs';
import path from 'node:path';
import { stageEnvOf } from '../src/peers/dockerfile';

// The bench starts our gateway with the environment its image sets
// (services.ts, PRODUCTION_GATEWAY_ENV), read from the Dockerfile's stage.

const SAMPLE = `FROM node:24 AS base
ENV A=1
FROM base AS runtime-gateway
ENV PORT=3002
# a comment
ENV MALLOC_ARENA_MAX=2 OTHER=x
EXPOSE 3002
ENV OTHER=y

FROM runtime-gateway AS runtime
ENV B=2
`;

describe('stageEnvOf', () => {
  it('reads the ENV pairs of one stage only, later ones winning', () => {
    expect(stageEnvOf(SAMPLE, 'runtime-gateway')).toEqual({
      PORT: '3002',
      MALLOC_ARENA_MAX: '2',
      OTHER: 'y',
    });
    expect(stageEnvOf(SAMPLE, 'base')).toEqual({ A: '1' });
  });

  it('refuses a stage that is not there, and an ENV it cannot read', () => {
    expect(() => stageEnvOf(SAMPLE, 'runtime-payment')).toThrow(/no stage runtime-payment/);
    expect(() => stageEnvOf('FROM x AS s\nENV LEGACY value\n', 's')).toThrow(/ENV without NAME=value/);
  });

  it("finds the repository's gateway stage and what it sets besides the port", () => {
    const dockerfile = readFileSync(path.join(__dirname, '..', '..', 'Dockerfile'), 'utf8');
    const env = stageEnvOf(dockerfile, 'runtime-gateway');
    expect(env.PORT).toBe('3002');
    expect(env.MALLOC_ARENA_MAX).toBe('2');
  });
});
