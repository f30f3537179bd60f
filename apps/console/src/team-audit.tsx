import type { TeamAuditEvent } from '@platform/contract';
import type { TeamApi } from './api';
import { formatDate } from './format';
import { Card, ErrorText, Table, useLoad } from './ui';

/** Before and after of an event in one line (the gateway never puts secrets in them). */
function change(e: TeamAuditEvent): string {
  const show = (v: unknown) => (v === null || v === undefined ? '' : JSON.stringify(v));
  const before = show(e.before);
  const after = show(e.after);
  if (before && after) return `${before} → ${after}`;
  return before || after;
}

/** The team's audit log, newest first (admins and the owner): who did what, when, from where. */
export function TeamAudit(props: { team: TeamApi; onAuthLost: (err: unknown) => void }) {
  // The members' addresses name the actors (a former member shows as an id).
  const { data, error, load } = useLoad(async () => {
    const [events, members] = await Promise.all([props.team.audit(), props.team.members()]);
    return { events, emails: new Map(members.map((m) => [m.user_id, m.email])) };
  }, props.onAuthLost);
  const events = data?.events;
  return (
    <Card id="team-audit" title="Audit log">
      <div class="title-row">
        <p class="hint">
          Every change to the team, its members, keys, budgets and provider keys; the 500 newest. The API
          exports more (<code>GET /api/v1/audit/export</code>).
        </p>
        <button type="button" class="secondary small" onClick={() => void load()}>
          Refresh
        </button>
      </div>
      <ErrorText error={error} />
      {events && events.length === 0 && <p>Nothing recorded yet.</p>}
      {events && events.length > 0 && (
        <Table
          testId="team-audit-table"
          caption="The team's audit log, newest first"
          columns={['When', 'Who', 'What', { label: 'From', wide: true }, { label: 'Change', wide: true }]}
        >
          {events.map((e) => (
            <tr key={e.id} data-action={e.action}>
              <td>{formatDate(e.at)}</td>
              <td class="wrap">
                {(e.actor_user_id && data?.emails.get(e.actor_user_id)) ?? e.actor_user_id ?? e.actor_kind}
              </td>
              <td class="wrap">
                <code>{e.action}</code>
                {e.target && <div class="hint">{e.target}</div>}
              </td>
              <td class="wide">{e.ip}</td>
              <td class="wide wrap change">{change(e)}</td>
            </tr>
          ))}
        </Table>
      )}
    </Card>
  );
}
