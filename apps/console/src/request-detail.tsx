import type { RequestLogDetail } from '@platform/contract';
import { useEffect, useRef } from 'preact/hooks';
import type { RequestLogApi } from './api';
import { formatNumber } from './format';
import { formatMoney } from './money';
import { ErrorText, Table, useLoad } from './ui';

type Attempt = RequestLogDetail['attempts'][number];

/**
 * The attempts on one time axis: a bar per attempt from its start to its end
 * (a stream's: its first token), and the whole request behind them. SVG
 * geometry attributes, not inline styles, so the console's CSP holds.
 */
function Timeline(props: { detail: RequestLogDetail }) {
  const { attempts, latency_ms: total, ttft_ms: ttft } = props.detail;
  const width = 600;
  const row = 22;
  const height = row * (attempts.length + 1) + 4;
  const end = Math.max(1, total, ...attempts.map((a) => a.start_ms + a.duration_ms));
  const x = (ms: number) => (ms / end) * width;
  return (
    <svg
      class="timeline"
      viewBox={`0 0 ${width} ${height}`}
      role="img"
      aria-label={`${attempts.length} attempt${attempts.length === 1 ? '' : 's'} over ${formatNumber(total)} ms`}
    >
      <rect class="whole" x={0} y={2} width={x(total)} height={row - 6}>
        <title>{`whole request: ${formatNumber(total)} ms`}</title>
      </rect>
      {attempts.map((a, i) => (
        <rect
          key={`${a.target}/${a.start_ms}/${i}`}
          class={a.outcome === 'success' ? 'ok' : 'failed'}
          x={x(a.start_ms)}
          width={Math.max(2, x(a.duration_ms))}
          y={row * (i + 1) + 2}
          height={row - 6}
        >
          <title>{`${a.target}: ${a.outcome} (${a.status ?? 'no status'}), ${a.start_ms}–${a.start_ms + a.duration_ms} ms`}</title>
        </rect>
      ))}
      {ttft !== null && <line class="ttft" x1={x(ttft)} x2={x(ttft)} y1={0} y2={height} />}
    </svg>
  );
}

function AttemptRow(props: { a: Attempt; n: number }) {
  const { a } = props;
  return (
    <tr data-outcome={a.outcome}>
      <td class="num">{props.n}</td>
      <td>{a.target}</td>
      <td>{a.outcome}</td>
      <td class="num">{a.status ?? '—'}</td>
      <td class="num">{a.retry > 0 ? `retry ${a.retry}` : ''}</td>
      <td class="num">{formatNumber(a.start_ms)} ms</td>
      <td class="num">{formatNumber(a.duration_ms)} ms</td>
    </tr>
  );
}

/**
 * One request's page (#request/<id>), read from `log` (the personal or a
 * team's routes): its facts, its attempts as a timeline, and its captured
 * text if the gateway gave it (`content`; a team's only to admins and the owner).
 */
export function RequestDetail(props: { id: string; log: RequestLogApi; onAuthLost: (err: unknown) => void }) {
  const { log, id } = props;
  const { data: d, error } = useLoad(() => log.requestLogEntry(id), props.onAuthLost, id);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  return (
    <section class="card" id="request" aria-labelledby="request-title">
      <p>
        <a href="#request-log">← Request log</a>
      </p>
      <h2 id="request-title" ref={heading} tabIndex={-1}>
        Request <code>{props.id}</code>
      </h2>
      <ErrorText error={error} />
      {d && (
        <>
          <dl class="facts" data-testid="request-facts">
            <dt>Time (UTC)</dt>
            <dd>{d.created_at.replace('T', ' ').slice(0, 23)}</dd>
            <dt>Status</dt>
            <dd data-testid="request-status">
              {d.status}
              {d.error ? ` (${d.error})` : ''}
            </dd>
            <dt>Project, endpoint, lane</dt>
            <dd>
              {d.project_id}, {d.endpoint}, {d.lane ?? '—'}
            </dd>
            <dt>{d.status < 400 ? 'Answered by' : 'Last target tried'}</dt>
            <dd>{d.provider ? `${d.provider}/${d.model}` : 'none'}</dd>
            <dt>Total, first token</dt>
            <dd>
              {formatNumber(d.latency_ms)} ms, {d.ttft_ms === null ? '—' : `${formatNumber(d.ttft_ms)} ms`}
            </dd>
            <dt>Tokens (prompt, completion, cached)</dt>
            <dd>
              {formatNumber(d.prompt_tokens)}, {formatNumber(d.completion_tokens)},{' '}
              {formatNumber(d.cached_tokens)}
            </dd>
            <dt>Cost</dt>
            <dd>{formatMoney(d.cost_micros, d.currency)}</dd>
            <dt>Client</dt>
            <dd>{d.user_agent ?? '—'}</dd>
          </dl>
          <h3>Attempts</h3>
          {d.attempts.length === 0 ? (
            <p>No upstream attempt (refused before any target was called).</p>
          ) : (
            <>
              <Timeline detail={d} />
              <p class="hint">
                Top bar: the whole request; one bar per attempt (failed ones in red); the line marks the first
                token.
              </p>
              <Table
                testId="attempts-table"
                caption="Upstream attempts in order"
                columns={[
                  { label: '#', numeric: true },
                  'Target',
                  'Outcome',
                  { label: 'Status', numeric: true },
                  { label: 'Retry', numeric: true },
                  { label: 'Start', numeric: true },
                  { label: 'Duration', numeric: true },
                ]}
              >
                {d.attempts.map((a, i) => (
                  <AttemptRow key={`${a.target}/${a.start_ms}/${i}`} a={a} n={i + 1} />
                ))}
              </Table>
            </>
          )}
          {d.content && (
            <div data-testid="captured-content">
              <h3>Prompt</h3>
              <pre class="captured">{d.content.prompt ?? '—'}</pre>
              <h3>Answer</h3>
              <pre class="captured">{d.content.answer ?? '—'}</pre>
            </div>
          )}
        </>
      )}
    </section>
  );
}
