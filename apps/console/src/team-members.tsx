import type { TeamMember, TeamRoleName, TeamSummary } from '@platform/contract';
import { useState } from 'preact/hooks';
import type { TeamApi } from './api';
import { ConfirmDialog } from './dialog';
import { formatDate } from './format';
import { BusyButton, Card, ErrorText, Field, onSubmit, Table, useAction, useLoad } from './ui';

type GivenRole = Exclude<TeamRoleName, 'owner'>;
const RANK: Record<TeamRoleName, number> = { owner: 4, admin: 3, member: 2, viewer: 1 };

/**
 * Whether `mine` may give or take `target` (the gateway's rule, docs/teams.md#roles:
 * an admin manages members and viewers, only the owner admins). The gateway decides;
 * this only hides controls that would be refused.
 */
function canManage(mine: TeamRoleName, target: TeamRoleName): boolean {
  if (target === 'owner') return false;
  return mine === 'owner' || RANK[mine] > RANK[target];
}

type Pending = { kind: 'remove' | 'transfer' | 'leave'; member?: TeamMember };

/** Members with their roles; invite by e-mail, change roles, remove, transfer ownership, leave. */
export function TeamMembers(props: {
  summary: TeamSummary;
  team: TeamApi;
  userId: string;
  onLeft: () => void;
  onChanged: () => void;
  onAuthLost: (err: unknown) => void;
}) {
  const { summary, team, onAuthLost } = props;
  const may = (p: string) => summary.permissions.includes(p);
  const givable = (['admin', 'member', 'viewer'] as GivenRole[]).filter((r) => canManage(summary.role, r));
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<GivenRole>('member');
  const [invited, setInvited] = useState<string | null>(null);
  const [pending, setPending] = useState<Pending | null>(null);
  const { data: members, error, load } = useLoad(() => team.members(), onAuthLost);

  const inviting = useAction(
    async () => {
      const sent = await team.invite({ email: email.trim(), role });
      setInvited(
        `Invitation mailed to ${sent.email} (${sent.role}); it is valid until ${formatDate(sent.expires_at)}.`,
      );
      setEmail('');
    },
    { onError: onAuthLost },
  );
  const changing = useAction(
    async (member: TeamMember, next: GivenRole) => {
      await team.setRole({ user_id: member.user_id, role: next });
      await load();
    },
    { onError: onAuthLost },
  );
  const confirming = useAction(
    async (what: Pending) => {
      if (what.kind === 'leave') {
        await team.leave();
        setPending(null);
        props.onLeft();
        return;
      }
      const member = what.member as TeamMember;
      if (what.kind === 'remove') await team.remove(member.user_id);
      else await team.transfer(member.user_id);
      setPending(null);
      await load();
      if (what.kind === 'transfer') props.onChanged();
    },
    { onError: onAuthLost },
  );

  const mine = (m: TeamMember) => m.user_id === props.userId;
  return (
    <Card id="team-members" title="Members">
      <ErrorText error={error ?? changing.error} />
      {members && (
        <Table
          testId="team-members-table"
          caption="Members of the team and their roles"
          columns={['E-mail', 'Role', { label: 'Joined', wide: true }, { label: 'Actions', hidden: true }]}
        >
          {members.map((m) => (
            <tr key={m.user_id} data-member={m.email}>
              <th scope="row" class="wrap">
                {m.email}
                {mine(m) && ' (you)'}
              </th>
              <td>
                {may('members.role') && !mine(m) && canManage(summary.role, m.role) ? (
                  <select
                    aria-label={`Role of ${m.email}`}
                    value={m.role}
                    disabled={changing.busy}
                    onChange={(e) => void changing.run(m, (e.target as HTMLSelectElement).value as GivenRole)}
                  >
                    {givable.map((r) => (
                      <option key={r} value={r}>
                        {r}
                      </option>
                    ))}
                  </select>
                ) : (
                  m.role
                )}
              </td>
              <td class="wide">{formatDate(m.joined_at)}</td>
              <td>
                <div class="row-actions">
                  {may('members.remove') && !mine(m) && canManage(summary.role, m.role) && (
                    <button
                      type="button"
                      class="danger small"
                      aria-label={`Remove ${m.email}`}
                      onClick={() => setPending({ kind: 'remove', member: m })}
                    >
                      Remove
                    </button>
                  )}
                  {may('team.transfer') && !mine(m) && (
                    <button
                      type="button"
                      class="secondary small"
                      aria-label={`Make ${m.email} the owner`}
                      onClick={() => setPending({ kind: 'transfer', member: m })}
                    >
                      Make owner
                    </button>
                  )}
                  {mine(m) && summary.role !== 'owner' && (
                    <button type="button" class="danger small" onClick={() => setPending({ kind: 'leave' })}>
                      Leave team
                    </button>
                  )}
                </div>
              </td>
            </tr>
          ))}
        </Table>
      )}
      {may('members.invite') && (
        <form onSubmit={onSubmit(inviting.run)} aria-label="Invite a member">
          <h3>Invite someone</h3>
          <p class="hint">
            They get an e-mail with a link that signs them in and joins them to the team (valid 7 days, once).
          </p>
          <div class="two-cols">
            <div>
              <Field
                id="invite-email"
                label="E-mail address"
                type="email"
                required
                maxLength={254}
                value={email}
                onValue={setEmail}
              />
            </div>
            <div>
              <label for="invite-role">Role</label>
              <select
                id="invite-role"
                value={role}
                onChange={(e) => setRole((e.target as HTMLSelectElement).value as GivenRole)}
              >
                {givable.map((r) => (
                  <option key={r} value={r}>
                    {r}
                  </option>
                ))}
              </select>
            </div>
          </div>
          <BusyButton busy={inviting.busy} busyLabel="Sending…">
            Send invitation
          </BusyButton>
          <p role="status" aria-live="polite" data-testid="invite-sent">
            {invited}
          </p>
          <ErrorText error={inviting.error} />
        </form>
      )}
      {pending && (
        <ConfirmDialog
          title={
            pending.kind === 'leave'
              ? `Leave the team ${summary.name}?`
              : pending.kind === 'remove'
                ? `Remove ${pending.member?.email}?`
                : `Make ${pending.member?.email} the owner?`
          }
          confirmLabel={
            pending.kind === 'leave' ? 'Leave team' : pending.kind === 'remove' ? 'Remove' : 'Make owner'
          }
          action={confirming}
          onConfirm={() => void confirming.run(pending)}
          onCancel={() => setPending(null)}
        >
          <p>
            {pending.kind === 'transfer'
              ? 'You become an admin; only the new owner can give ownership back.'
              : 'The team keys stay the team’s; access to the team ends at once.'}
          </p>
        </ConfirmDialog>
      )}
    </Card>
  );
}
