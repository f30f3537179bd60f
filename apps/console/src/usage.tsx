import type { UsageRow, UsageTodayResponse } from '@platform/contract';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, errorWords } from './api';
import { formatNumber, lastDays } from './format';
import { ErrorText, Table } from './ui';

const DAYS = 30;

type DayTotal = { day: string; requests: number; tokens: number };

function totalsPerDay(rows: UsageRow[], days: string[]): DayTotal[] {
  const byDay = new Map(days.map((day) => [day, { day, requests: 0, tokens: 0 }]));
  for (const row of rows) {
    const total = byDay.get(row.day);
    if (!total) continue;
    total.requests += row.requests;
    total.tokens += row.total_tokens;
  }
  return [...byDay.values()];
}

/** Tokens per day as bars; an SVG built from elements, so the CSP needs no inline style. */
function Chart(props: { totals: DayTotal[] }) {
  const width = 600;
  const height = 140;
  const top = 4;
  const bottom = 2;
  const peak = Math.max(0, ...props.totals.map((t) => t.tokens));
  const max = Math.max(1, peak);
  const slot = width / props.totals.length;
  const sum = props.totals.reduce((s, t) => s + t.tokens, 0);
  const first = props.totals[0]?.day ?? '';
  const last = props.totals.at(-1)?.day ?? '';
  // Labels are HTML beside the SVG, so they keep the page's font size however
  // narrow the screen scales the drawing (SVG text shrank to about 6 px on a phone).
  return (
    <figure class="chart-box">
      <p class="chart-peak" aria-hidden="true">
        {formatNumber(peak)} tokens at most
      </p>
      <svg
        class="chart"
        viewBox={`0 0 ${width} ${height}`}
        role="img"
        aria-label={`Tokens per day from ${first} to ${last}: ${formatNumber(sum)} in total, at most ${formatNumber(peak)} on one day.`}
      >
        <line class="axis" x1={0} x2={width} y1={height - bottom} y2={height - bottom} />
        {props.totals.map((t, i) => {
          const h = ((height - top - bottom) * t.tokens) / max;
          return (
            <rect
              key={t.day}
              class="bar"
              x={i * slot + 2}
              width={Math.max(1, slot - 4)}
              y={height - bottom - h}
              height={h}
            >
              <title>{`${t.day}: ${formatNumber(t.tokens)} tokens, ${formatNumber(t.requests)} requests`}</title>
            </rect>
          );
        })}
      </svg>
      <div class="chart-labels" aria-hidden="true">
        <span>{first}</span>
        <span>{last}</span>
      </div>
    </figure>
  );
}

function Today(props: { today: UsageTodayResponse }) {
  const { total_tokens: used, daily_token_budget: budget } = props.today;
  const share = budget > 0 ? Math.min(100, (used * 100) / budget) : 0;
  return (
    <div class="today">
      <label for="budget-meter">
        Today ({props.today.day}, UTC): <b>{formatNumber(used)}</b> of {formatNumber(budget)} tokens (
        {share.toFixed(share < 10 ? 1 : 0)}%)
      </label>
      <meter
        id="budget-meter"
        min={0}
        max={budget}
        low={budget * 0.75}
        high={budget * 0.9}
        optimum={0}
        value={used}
      />
      <p class="hint">
        AI calls are refused with 429 once the daily budget is spent; it starts again at{' '}
        {new Date(props.today.resets_at).toISOString().slice(11, 16)} UTC.
      </p>
    </div>
  );
}

/** The last 30 days per project, day, lane and model, and today's tokens against the budget. */
export function Usage(props: { refreshKey: number; onAuthLost: (err: unknown) => void }) {
  const [rows, setRows] = useState<UsageRow[] | null>(null);
  const [today, setToday] = useState<UsageTodayResponse | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [days, setDays] = useState(() => lastDays(DAYS));
  const { onAuthLost } = props;

  const load = useCallback(async () => {
    setBusy(true);
    const range = lastDays(DAYS);
    setDays(range);
    try {
      const [usage, now] = await Promise.all([
        api.usage(range[0] ?? '', range.at(-1) ?? ''),
        api.usageToday(),
      ]);
      setRows(usage);
      setToday(now);
      setError(null);
    } catch (err) {
      setError(errorWords(err));
      onAuthLost(err);
    } finally {
      setBusy(false);
    }
  }, [onAuthLost]);
  useEffect(() => {
    void load();
  }, [load, props.refreshKey]);

  // One line per lane and model; the first line of a project's day carries its error count.
  const lines = (rows ?? [])
    .slice()
    .reverse()
    .flatMap((row) => row.models.map((m, i) => ({ row, m, first: i === 0 })));

  return (
    <section class="card" id="usage" aria-labelledby="usage-title" aria-busy={busy}>
      <div class="title-row">
        <h2 id="usage-title">Usage</h2>
        <button type="button" class="secondary small" onClick={() => void load()} disabled={busy}>
          Refresh
        </button>
      </div>
      {today && <Today today={today} />}
      <ErrorText error={error} />
      {rows && (
        <>
          <h3>Tokens per day, last {DAYS} days</h3>
          <Chart totals={totalsPerDay(rows, days)} />
          <h3>Per project and day</h3>
          {lines.length === 0 ? (
            <p>No requests in the last {DAYS} days.</p>
          ) : (
            <Table
              testId="usage-table"
              caption="Requests and tokens per project, day, lane and model"
              columns={[
                'Day',
                'Project',
                'Lane',
                'Model',
                { label: 'Requests', numeric: true },
                { label: 'Tokens', numeric: true },
                { label: 'Errors', numeric: true },
              ]}
            >
              {lines.map(({ row, m, first }) => (
                <tr key={`${row.day}/${row.project_id}/${m.lane}/${m.model}`}>
                  <td>{row.day}</td>
                  <td>{row.project_id}</td>
                  <td>{m.lane ?? '—'}</td>
                  <td>{m.model ?? (m.lane ? '—' : 'none (failed before a model)')}</td>
                  <td class="num">{formatNumber(m.requests)}</td>
                  <td class="num">{formatNumber(m.total_tokens)}</td>
                  <td class="num">{first ? formatNumber(row.errors) : ''}</td>
                </tr>
              ))}
            </Table>
          )}
        </>
      )}
    </section>
  );
}
