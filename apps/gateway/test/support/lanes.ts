type Target = { provider: string; model: string };

function target(spec: string): Target {
  const at = spec.indexOf(':');
  return { provider: spec.slice(0, at), model: spec.slice(at + 1) };
}

/**
 * A lanes config (the AI_LANES_CONFIG file format) from `provider:model`
 * lists: each lane's first target is its default model.
 */
export function lanesConfig<L extends string, M extends string>(
  lanes: Record<L, string[]>,
  media: Record<M, string[]>,
): { lanes: Record<L, { default_model: string; targets: Target[] }>; media: Record<M, Target[]> } {
  const mapValues = <K extends string, V, W>(record: Record<K, V>, fn: (v: V) => W) =>
    Object.fromEntries(Object.entries(record).map(([k, v]) => [k, fn(v as V)])) as Record<K, W>;
  return {
    lanes: mapValues(lanes, (specs) => {
      const targets = specs.map(target);
      return { default_model: targets[0]?.model ?? '', targets };
    }),
    media: mapValues(media, (specs) => specs.map(target)),
  };
}
