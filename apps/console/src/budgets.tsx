import type { Budget, SetBudgetRequest } from '@platform/contract';
import { useState } from 'preact/hooks';
import { api } from './api';
import { formatNumber } from './format';
import { formatMoney } from './money';
import { BusyButton, ErrorText, onSubmit, Table, useAction, useLoad } from './ui';

type Scope = Budget['scope'];
type Period = Budget['period'];
type Unit = Budget['unit'];

const SCOPE_WORDS: Record<Exclude<Scope, 'user'>, string> = {
  api_key: 'One API key',
  project: 'One project',
};

/** Where budgets are read and written: a team's routes; the signed-in user's when absent. */
export type BudgetSource = {
  list: () => Promise<{ currency: string; budgets: Budget[] }>;
  set: (body: SetBudgetRequest) => Promise<unknown>;
  /** Absent: budgets cannot be removed here (a team's are replaced). */
  remove?: (b: Budget) => Promise<void>;
  /** Absent: read only (the caller's role may not set them). */
  canWrite: boolean;
  /** How the `user` scope reads here ("all the team's usage"). */
  everything: string;
};

const PERSONAL: BudgetSource = {
  list: () => api.listBudgets(),
  set: (body) => api.setBudget(body),
  remove: (b) => api.deleteBudget(b),
  canWrite: true,
  everything: 'all my usage',
};

function amount(value: number, unit: Unit, currency: string): string {
  return unit === 'cost' ? formatMoney(value, currency) : `${formatNumber(value)} tokens`;
}

/** The budgets in force (with what their window used) and a form to set one; over a budget AI calls get 429. */
export function Budgets(props: { onAuthLost: (err: unknown) => void; source?: BudgetSource }) {
  const source = props.source ?? PERSONAL;
  const [scope, setScope] = useState<Scope>('project');
  const [subject, setSubject] = useState('');
  const [period, setPeriod] = useState<Period>('monthly');
  const [unit, setUnit] = useState<Unit>('cost');
  const [limit, setLimit] = useState('');
  const { onAuthLost } = props;

  const { data, error, load } = useLoad(() => source.list(), onAuthLost);

  const currency = data?.currency ?? 'USD';
  const save = useAction(
    async () => {
      const value = Number(limit);
      // A cost is entered in currency units and sent in micro-units.
      const micro = unit === 'cost' ? Math.round(value * 1_000_000) : Math.round(value);
      await source.set({
        scope,
        subject: scope === 'user' ? '' : subject.trim(),
        period,
        unit,
        limit: micro,
      });
      setLimit('');
      await load();
    },
    { onError: onAuthLost },
  );
  const remove = useAction(
    async (b: Budget) => {
      await source.remove?.(b);
      await load();
    },
    { onError: onAuthLost },
  );

  return (
    <section class="card" id="budgets" aria-labelledby="budgets-title">
      <h2 id="budgets-title">Budgets</h2>
      <p class="hint">
        Over a budget, AI calls are refused with 429 until its window (UTC day or month) starts again.
        Requests in flight count against it.
      </p>
      <ErrorText error={error ?? remove.error} />
      {data && data.budgets.length > 0 && (
        <Table
          testId="budgets-table"
          caption="Budgets in force"
          columns={[
            'For',
            'Period',
            { label: 'Used', numeric: true },
            { label: 'Limit', numeric: true },
            'Resets',
            { label: 'Actions', hidden: true },
          ]}
        >
          {data.budgets.map((b) => (
            <tr key={`${b.scope}/${b.subject}/${b.period}/${b.unit}`}>
              <td>
                {b.scope === 'user'
                  ? source.everything
                  : `${b.scope === 'api_key' ? 'key' : 'project'} ${b.subject}`}
              </td>
              <td>{b.period}</td>
              <td class="num">{amount(b.used, b.unit, currency)}</td>
              <td class="num">{amount(b.limit, b.unit, currency)}</td>
              <td>{b.resets_at.slice(0, 16).replace('T', ' ')} UTC</td>
              <td>
                {b.source === 'user' && source.remove && source.canWrite ? (
                  <button
                    type="button"
                    class="secondary small"
                    onClick={() => void remove.run(b)}
                    disabled={remove.busy}
                  >
                    Remove
                  </button>
                ) : b.source === 'user' ? null : (
                  <span class="hint">server default</span>
                )}
              </td>
            </tr>
          ))}
        </Table>
      )}
      {source.canWrite && (
        <form onSubmit={onSubmit(save.run)} aria-label="Set a budget">
          <label>
            For{' '}
            <select value={scope} onChange={(e) => setScope((e.target as HTMLSelectElement).value as Scope)}>
              {(['user', ...Object.keys(SCOPE_WORDS)] as Scope[]).map((s) => (
                <option key={s} value={s}>
                  {s === 'user'
                    ? `${source.everything.charAt(0).toUpperCase()}${source.everything.slice(1)}`
                    : SCOPE_WORDS[s]}
                </option>
              ))}
            </select>
          </label>
          {scope !== 'user' && (
            <label>
              {scope === 'api_key' ? 'API key id' : 'Project id'}{' '}
              <input
                required
                value={subject}
                onInput={(e) => setSubject((e.target as HTMLInputElement).value)}
              />
            </label>
          )}
          <label>
            Period{' '}
            <select
              value={period}
              onChange={(e) => setPeriod((e.target as HTMLSelectElement).value as Period)}
            >
              <option value="daily">daily</option>
              <option value="monthly">monthly</option>
            </select>
          </label>
          <label>
            In{' '}
            <select value={unit} onChange={(e) => setUnit((e.target as HTMLSelectElement).value as Unit)}>
              <option value="cost">{currency}</option>
              <option value="tokens">tokens</option>
            </select>
          </label>
          <label>
            Limit{' '}
            <input
              required
              inputMode="decimal"
              pattern={unit === 'cost' ? '[0-9]+([.][0-9]{1,6})?' : '[0-9]+'}
              value={limit}
              onInput={(e) => setLimit((e.target as HTMLInputElement).value)}
            />
          </label>
          <BusyButton busy={save.busy} busyLabel="Saving…">
            Set budget
          </BusyButton>
          <ErrorText error={save.error} />
        </form>
      )}
    </section>
  );
}
