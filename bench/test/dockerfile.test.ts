import { readFileSync } from 'node:fs';
import path from 'node:path';
import { stageCmdOf, stageEnvOf } from '../src/peers/dockerfile';

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

describe('stageCmdOf', () => {
  const WITH_CMDS = `FROM node:24 AS runtime-common
HEALTHCHECK --interval=10s \\
  CMD ["node", "-e", "probe"]
CMD ["node", "--a", "dist/main.js"]
FROM runtime-common AS runtime-payment
ENV PORT=3001
FROM runtime-common AS runtime-gateway
CMD ["node", "--x", "dist/main.js"]
CMD ["node", "--a", "--b", "dist/main.js"]
FROM runtime-gateway AS runtime
`;

  it("reads a stage's own command, the last one winning, not a HEALTHCHECK's", () => {
    expect(stageCmdOf(WITH_CMDS, 'runtime-common')).toEqual(['node', '--a', 'dist/main.js']);
    expect(stageCmdOf(WITH_CMDS, 'runtime-gateway')).toEqual(['node', '--a', '--b', 'dist/main.js']);
  });

  it('is undefined for a stage that inherits its command, and refuses what it cannot read', () => {
    expect(stageCmdOf(WITH_CMDS, 'runtime-payment')).toBeUndefined();
    expect(() => stageCmdOf(WITH_CMDS, 'nope')).toThrow(/no stage nope/);
    expect(() => stageCmdOf('FROM x AS s\nCMD ["node", 1]\n', 's')).toThrow(/not the exec form/);
  });

  it("finds the repository's commands: the gateway keeps wasm on Liftoff, payment does not", () => {
    const dockerfile = readFileSync(path.join(__dirname, '..', '..', 'Dockerfile'), 'utf8');
    const gateway = stageCmdOf(dockerfile, 'runtime-gateway');
    const common = stageCmdOf(dockerfile, 'runtime-common');
    expect(gateway).toEqual(['node', '--max-semi-space-size=8', '--liftoff-only', 'dist/main.js']);
    expect(common).toEqual(['node', '--max-semi-space-size=8', 'dist/main.js']);
    expect(stageCmdOf(dockerfile, 'runtime-payment')).toBeUndefined();
  });
});
