import type { UsageRow } from '@platform/contract';
import { api } from './api';
import { formatNumber, lastDays } from './format';
import { formatMoney } from './money';
import { ErrorText, Table, useLoad } from './ui';

const DAYS = 30;

type Line = { key: string; cells: string[]; tokens: number; cost: number };

/**
 * Spend of the last 30 days in money beside tokens: per project, per API key, per model and per day.
 * `read` gives the rows (a team's; the signed-in user's when absent).
 */
export function Spend(props: {
  refreshKey: number;
  onAuthLost: (err: unknown) => void;
  read?: (from: string, to: string) => Promise<UsageRow[]>;
}) {
  const read = props.read ?? api.usage;
  const { data: rows, error } = useLoad(
    () => {
      const range = lastDays(DAYS);
      return read(range[0] ?? '', range.at(-1) ?? '');
    },
    props.onAuthLost,
    props.refreshKey,
  );

  const currency = rows?.[0]?.currency ?? 'USD';
  const sum = (list: Line[]) => {
    const by = new Map<string, Line>();
    for (const l of list) {
      const seen = by.get(l.key);
      if (seen) {
        seen.tokens += l.tokens;
        seen.cost += l.cost;
      } else by.set(l.key, { ...l });
    }
    return [...by.values()].sort((a, b) => b.cost - a.cost || b.tokens - a.tokens);
  };
  const all = rows ?? [];
  const total = all.reduce((s, r) => s + r.cost_micros, 0);
  const byok = all.reduce((s, r) => s + r.byok_cost_micros, 0);
  const line = (key: string, cell: string, t: { total_tokens: number; cost_micros: number }): Line => ({
    key,
    cells: [cell],
    tokens: t.total_tokens,
    cost: t.cost_micros,
  });
  const groups: { title: string; head: string; lines: Line[] }[] = [
    {
      title: 'Per project',
      head: 'Project',
      lines: sum(all.map((r) => line(r.project_id, r.project_id, r))),
    },
    {
      title: 'Per API key',
      head: 'API key',
      lines: sum(
        all.flatMap((r) =>
          r.keys.map((k) =>
            line(
              k.api_key_id ?? 'console',
              k.api_key_id ? `${k.api_key_id.slice(0, 8)}…` : 'console (signed in)',
              k,
            ),
          ),
        ),
      ),
    },
    {
      title: 'Per model',
      head: 'Model',
      lines: sum(
        all.flatMap((r) =>
          r.models.map((m) =>
            line(`${m.provider}/${m.model}`, m.model ? `${m.provider ?? '?'}/${m.model}` : '—', m),
          ),
        ),
      ),
    },
    {
      title: 'Per day',
      head: 'Day',
      lines: sum(all.map((r) => line(r.day, r.day, r))).sort((a, b) => (a.key < b.key ? 1 : -1)),
    },
  ];

  return (
    <section class="card" id="spend" aria-labelledby="spend-title">
      <h2 id="spend-title">Spend</h2>
      <ErrorText error={error} />
      {rows && (
        <>
          <p data-testid="spend-total">
            Last {DAYS} days: <b>{formatMoney(total, currency)}</b>
            {byok > 0 && (
              <>
                {' '}
                (of which {formatMoney(byok, currency)} paid by {props.read ? "the team's" : 'your'} own
                provider keys)
              </>
            )}
          </p>
          {groups.map((g) =>
            g.lines.length === 0 ? null : (
              <div key={g.title}>
                <h3>{g.title}</h3>
                <Table
                  testId={`spend-${g.head.toLowerCase().replace(' ', '-')}`}
                  caption={`Cost and tokens ${g.title.toLowerCase()}, last ${DAYS} days`}
                  columns={[g.head, { label: 'Tokens', numeric: true }, { label: 'Cost', numeric: true }]}
                >
                  {g.lines.map((l) => (
                    <tr key={l.key}>
                      {l.cells.map((c) => (
                        <td key={c}>{c}</td>
                      ))}
                      <td class="num">{formatNumber(l.tokens)}</td>
                      <td class="num">{formatMoney(l.cost, currency)}</td>
                    </tr>
                  ))}
                </Table>
              </div>
            ),
          )}
        </>
      )}
    </section>
  );
}
