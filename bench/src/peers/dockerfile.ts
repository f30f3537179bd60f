/** The lines of one stage of a Dockerfile: after its `FROM ... AS <stage>`, up to the next `FROM`. */
function stageLines(dockerfile: string, stage: string): string[] {
  const lines = dockerfile.split('\n');
  const start = lines.findIndex(
    (line) => /^FROM \S+ AS /i.test(line) && line.trim().endsWith(` AS ${stage}`),
  );
  if (start === -1) throw new Error(`the Dockerfile has no stage ${stage}`);
  const end = lines.findIndex((line, i) => i > start && line.startsWith('FROM '));
  return lines.slice(start + 1, end === -1 ? undefined : end);
}

/**
 * The `ENV` pairs of one stage of a Dockerfile (`FROM ... AS <stage>` up to
 * the next `FROM`), in order, later ones winning; only the `ENV K=V [K=V...]`
 * form, which is the one the repository's Dockerfile uses.
 */
export function stageEnvOf(dockerfile: string, stage: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of stageLines(dockerfile, stage)) {
    if (!line.startsWith('ENV ')) continue;
    for (const pair of line.slice(4).trim().split(/\s+/)) {
      const eq = pair.indexOf('=');
      if (eq <= 0) throw new Error(`the Dockerfile's stage ${stage}: ENV without NAME=value: ${line}`);
      env[pair.slice(0, eq)] = pair.slice(eq + 1);
    }
  }
  return env;
}

/**
 * The argv of one stage's own `CMD [...]` (exec form; the last one of the
 * stage wins, as Docker takes it), or undefined when the stage sets none and
 * inherits its base's. Indented lines (a `HEALTHCHECK`'s `CMD`) are not the
 * stage's command.
 */
export function stageCmdOf(dockerfile: string, stage: string): string[] | undefined {
  let cmd: string[] | undefined;
  for (const line of stageLines(dockerfile, stage)) {
    if (!line.startsWith('CMD ')) continue;
    const argv: unknown = JSON.parse(line.slice(4).trim());
    if (!Array.isArray(argv) || !argv.every((a) => typeof a === 'string'))
      throw new Error(`the Dockerfile's stage ${stage}: CMD is not the exec form: ${line}`);
    cmd = argv;
  }
  return cmd;
}
