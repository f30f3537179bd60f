import type { ApiKeySummary, RequestLogEntry } from '@platform/contract';
import { useState } from 'preact/hooks';
import type { RequestLogApi } from './api';
import { formatNumber } from './format';
import { formatMoney } from './money';
import { BusyButton, ErrorText, onSubmit, Table, useAction, useLoad } from './ui';

/** The filter form's fields, as typed; empty means "any". */
type Filters = {
  from: string;
  to: string;
  key: string;
  project: string;
  model: string;
  status: string;
  minCost: string;
  minLatency: string;
};

const NO_FILTERS: Filters = {
  from: '',
  to: '',
  key: '',
  project: '',
  model: '',
  status: '',
  minCost: '',
  minLatency: '',
};

const PAGE = 50;

/** The form as RequestLogQuery parameters; a local datetime-local value becomes an ISO instant. */
function queryOf(f: Filters, cursor: string | null): URLSearchParams {
  const q = new URLSearchParams({ limit: String(PAGE) });
  const set = (name: string, value: string) => {
    if (value.trim() !== '') q.set(name, value.trim());
  };
  if (f.from) set('from', new Date(f.from).toISOString());
  if (f.to) set('to', new Date(f.to).toISOString());
  set('key_id', f.key);
  set('project_id', f.project);
  set('model', f.model);
  set('status', f.status);
  // Cost is typed in currency units and sent in micro-units.
  if (f.minCost.trim() !== '') set('min_cost_micros', String(Math.round(Number(f.minCost) * 1_000_000)));
  set('min_latency_ms', f.minLatency);
  if (cursor) q.set('cursor', cursor);
  return q;
}

export function keyLabel(keys: ApiKeySummary[] | null, id: string | null): string {
  if (!id) return 'session';
  const key = keys?.find((k) => k.key_id === id);
  return key ? `${key.name} (${key.key_prefix}…)` : `${id.slice(0, 8)}…`;
}

function Row(props: { r: RequestLogEntry; keys: ApiKeySummary[] | null }) {
  const { r } = props;
  return (
    <tr data-request-id={r.request_id} data-status={r.status}>
      <td>
        <a href={`#request/${r.request_id}`}>{r.created_at.slice(0, 19).replace('T', ' ')}</a>
      </td>
      <td class="wide">{keyLabel(props.keys, r.key_id)}</td>
      <td>{r.project_id}</td>
      <td>{r.model ?? '—'}</td>
      <td class="num">
        {r.status}
        {r.error ? <span class="hint"> {r.error}</span> : null}
      </td>
      <td class="num">{formatNumber(r.latency_ms)} ms</td>
      <td class="num wide">{r.ttft_ms === null ? '—' : `${formatNumber(r.ttft_ms)} ms`}</td>
      <td class="num wide">{formatMoney(r.cost_micros, r.currency)}</td>
    </tr>
  );
}

/**
 * The request log: every AI request of the signed-in user (`log`: `api`) or
 * of a team (`log`: `api.team(id)`), newest first, filtered by time, key,
 * project, model, status, cost and latency; a row opens the request's page
 * (#request/<id>) with its attempts. `note` adds a line to the hint.
 */
export function RequestLog(props: {
  log: RequestLogApi;
  onAuthLost: (err: unknown) => void;
  keysVersion?: unknown;
  note?: string;
}) {
  const [form, setForm] = useState<Filters>(NO_FILTERS);
  const [rows, setRows] = useState<RequestLogEntry[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const { log, onAuthLost } = props;
  // Read again when a key is created on this page, so the key filter offers it.
  const keys = useLoad(() => log.listKeys(), onAuthLost, props.keysVersion);
  const field = (name: keyof Filters) => ({
    value: form[name],
    onInput: (e: Event) => setForm({ ...form, [name]: (e.target as HTMLInputElement).value }),
  });

  const search = useAction(
    async (more: boolean) => {
      const page = await log.searchRequestLog(queryOf(form, more ? next : null));
      setRows(more ? [...(rows ?? []), ...page.requests] : page.requests);
      setNext(page.next_cursor);
    },
    { onError: onAuthLost },
  );

  return (
    <section class="card" id="request-log" aria-labelledby="request-log-title" aria-busy={search.busy}>
      <h2 id="request-log-title">Request log</h2>
      <p class="hint">
        Every AI request with its attempts, newest first. Requests appear about a second after they end.
        {props.note ? ` ${props.note}` : ''}
      </p>
      <form class="filters" onSubmit={onSubmit(() => search.run(false))} aria-label="Search the request log">
        <label>
          From <input type="datetime-local" {...field('from')} />
        </label>
        <label>
          To <input type="datetime-local" {...field('to')} />
        </label>
        <label>
          API key used{' '}
          <select
            value={form.key}
            onChange={(e) => setForm({ ...form, key: (e.target as HTMLSelectElement).value })}
          >
            <option value="">any</option>
            {(keys.data ?? []).map((k) => (
              <option key={k.key_id} value={k.key_id}>
                {k.name} ({k.key_prefix}…)
              </option>
            ))}
          </select>
        </label>
        <label>
          Project <input {...field('project')} />
        </label>
        <label>
          Model <input {...field('model')} />
        </label>
        <label>
          Status{' '}
          <select
            value={form.status}
            onChange={(e) => setForm({ ...form, status: (e.target as HTMLSelectElement).value })}
          >
            <option value="">any</option>
            <option value="failed">failed (400 and above)</option>
            <option value="200">200</option>
            <option value="429">429</option>
            <option value="499">499 (client went away)</option>
            <option value="502">502</option>
            <option value="503">503</option>
            <option value="504">504</option>
          </select>
        </label>
        <label>
          Cost at least <input inputMode="decimal" pattern="[0-9]+([.][0-9]{1,6})?" {...field('minCost')} />
        </label>
        <label>
          Latency at least (ms) <input inputMode="numeric" pattern="[0-9]+" {...field('minLatency')} />
        </label>
        <BusyButton busy={search.busy} busyLabel="Searching…">
          Search
        </BusyButton>
      </form>
      <ErrorText error={search.error ?? keys.error} />
      {rows && rows.length === 0 && <p>No requests match.</p>}
      {rows && rows.length > 0 && (
        <Table
          testId="request-log-table"
          caption="AI requests, newest first"
          columns={[
            'Time (UTC)',
            { label: 'Key', wide: true },
            'Project',
            'Model',
            { label: 'Status', numeric: true },
            { label: 'Latency', numeric: true },
            { label: 'First token', numeric: true, wide: true },
            { label: 'Cost', numeric: true, wide: true },
          ]}
        >
          {rows.map((r) => (
            <Row key={r.request_id} r={r} keys={keys.data} />
          ))}
        </Table>
      )}
      {next && (
        <button type="button" class="secondary" onClick={() => void search.run(true)} disabled={search.busy}>
          Older requests
        </button>
      )}
    </section>
  );
}
