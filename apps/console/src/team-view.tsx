import type { GatewayConfigResponse, TeamSummary } from '@platform/contract';
import { useMemo } from 'preact/hooks';
import { api } from './api';
import { type BudgetSource, Budgets } from './budgets';
import { ProviderKeys } from './provider-keys';
import { Spend } from './spend';
import { TeamAudit } from './team-audit';
import { TeamKeys } from './team-keys';
import { TeamMembers } from './team-members';
import { Card } from './ui';

/** What a role may do, in words, for the team's heading card. */
const ROLE_WORDS: Record<TeamSummary['role'], string> = {
  owner: 'You own this team: everything below, and handing ownership to another member.',
  admin: 'As an admin you invite and manage members and viewers, set budgets and read the audit log.',
  member: 'As a member you see the team and create and revoke its keys.',
  viewer: 'As a viewer you see the team, its keys, budgets and spend.',
};

/** The sections of the team view, for the section links. */
export function teamSections(summary: TeamSummary): [string, string][] {
  return [
    ['team-members', 'Members'],
    ['team-keys', 'Team keys'],
    ['budgets', 'Budgets'],
    ['spend', 'Spend'],
    ['provider-keys', 'Provider keys'],
    ...(summary.permissions.includes('audit.read') ? [['team-audit', 'Audit log'] as [string, string]] : []),
  ];
}

/** One team: members and invitations, its keys and their rules, budgets and spend, the audit log. */
export function TeamView(props: {
  summary: TeamSummary;
  userId: string;
  providers?: GatewayConfigResponse['providers'];
  onTeamsChanged: (select?: string | null) => void;
  onAuthLost: (err: unknown) => void;
}) {
  const { summary, onAuthLost } = props;
  const team = useMemo(() => api.team(summary.team_id), [summary.team_id]);
  const may = (p: string) => summary.permissions.includes(p);
  const budgets = useMemo<BudgetSource>(
    () => ({
      list: () => team.budgets(),
      set: (body) => team.setBudget(body),
      remove: (b) => team.deleteBudget(b),
      canWrite: summary.permissions.includes('budgets.write'),
      everything: "all the team's usage",
    }),
    [team, summary.permissions],
  );
  return (
    <>
      <Card id="team" title={`Team ${summary.name}`}>
        <p data-testid="team-role">
          Your role: <b>{summary.role}</b>. {ROLE_WORDS[summary.role]}
        </p>
        <p class="hint">
          The team's keys, budgets and usage are its own, billed to the team (billing id{' '}
          <code>{summary.billing_user_id}</code>), not to its members.
        </p>
      </Card>
      <TeamMembers
        summary={summary}
        team={team}
        userId={props.userId}
        onAuthLost={onAuthLost}
        onLeft={() => props.onTeamsChanged(null)}
        onChanged={() => props.onTeamsChanged(summary.team_id)}
      />
      <TeamKeys team={team} canWrite={may('keys.write')} onAuthLost={onAuthLost} />
      <Budgets source={budgets} onAuthLost={onAuthLost} />
      <Spend refreshKey={0} read={team.usage} onAuthLost={onAuthLost} />
      <ProviderKeys
        providers={props.providers}
        team={{ api: team, canWrite: may('provider_keys.write') }}
        onAuthLost={onAuthLost}
      />
      {may('audit.read') && <TeamAudit team={team} onAuthLost={onAuthLost} />}
    </>
  );
}
