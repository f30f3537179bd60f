import {
  BUDGET_DEFAULT_ENTRY,
  BUDGET_KINDS,
  ZBudgetPeriod,
  ZBudgetScope,
  ZBudgetUnit,
} from '@platform/contract';
import {
  BUDGET_PERIODS,
  BUDGET_SCOPES,
  BUDGET_UNITS,
  counterKey,
  describeBudget,
  isUserDailyTokens,
  parseBudgetDefaults,
  windowOf,
} from './rules';

// Budget kinds come from one table (the contract's BUDGET_KINDS); windows,
// counter keys and names are plain functions of a budget's id.

describe('budget kinds', () => {
  it("the gateway's lists are the contract's table, as are the contract's schemas", () => {
    expect(BUDGET_SCOPES).toEqual(BUDGET_KINDS.scopes);
    expect(BUDGET_PERIODS).toEqual(BUDGET_KINDS.periods);
    expect(BUDGET_UNITS).toEqual(BUDGET_KINDS.units);
    expect(ZBudgetScope.options).toEqual([...BUDGET_KINDS.scopes]);
    expect(ZBudgetPeriod.options).toEqual([...BUDGET_KINDS.periods]);
    expect(ZBudgetUnit.options).toEqual([...BUDGET_KINDS.units]);
  });

  it('AI_BUDGET_DEFAULTS accepts every kind of the table, and nothing else', () => {
    for (const scope of BUDGET_SCOPES)
      for (const period of BUDGET_PERIODS)
        for (const unit of BUDGET_UNITS)
          expect(BUDGET_DEFAULT_ENTRY.test(`${scope}.${period}.${unit}=5`)).toBe(true);
    for (const bad of [
      'team.daily.tokens=5',
      'user.weekly.tokens=5',
      'user.daily.requests=5',
      'user.daily.tokens=-1',
    ])
      expect(BUDGET_DEFAULT_ENTRY.test(bad)).toBe(false);
    expect(BUDGET_DEFAULT_ENTRY.test('user.daily.tokens=1234567890123456')).toBe(false);
  });

  it('parseBudgetDefaults reads scope, period, unit and limit, and refuses a bad entry', () => {
    expect(parseBudgetDefaults(['project.monthly.cost=50000000', 'user.daily.tokens=100'])).toEqual([
      { scope: 'project', period: 'monthly', unit: 'cost', limit: 50_000_000 },
      { scope: 'user', period: 'daily', unit: 'tokens', limit: 100 },
    ]);
    expect(() => parseBudgetDefaults(['user.daily'])).toThrow('must be scope.period.unit=limit');
  });
});

describe('budget windows and counters', () => {
  const at = Date.parse('2027-03-31T23:59:59.999Z');

  it('a daily window is the UTC day, a monthly one the UTC month', () => {
    expect(windowOf('daily', at)).toEqual({
      label: '2027-03-31',
      startsAt: Date.parse('2027-03-31T00:00:00Z'),
      endsAt: Date.parse('2027-04-01T00:00:00Z'),
    });
    expect(windowOf('monthly', at)).toEqual({
      label: '2027-03',
      startsAt: Date.parse('2027-03-01T00:00:00Z'),
      endsAt: Date.parse('2027-04-01T00:00:00Z'),
    });
    expect(windowOf('daily', at + 1).label).toBe('2027-04-01');
    expect(windowOf('monthly', Date.parse('2027-12-15T00:00:00Z')).endsAt).toBe(
      Date.parse('2028-01-01T00:00:00Z'),
    );
  });

  it('each scope has its own counter key; a project key carries its user', () => {
    const id = { period: 'daily', unit: 'tokens' } as const;
    expect(counterKey('u1', { ...id, scope: 'user', subject: '' }, 'L')).toBe('budget:tokens:u1:L');
    expect(counterKey('u1', { ...id, scope: 'api_key', subject: 'k9' }, 'L')).toBe('budget:tokens:key:k9:L');
    expect(counterKey('u1', { ...id, scope: 'project', subject: 'p' }, 'L')).toBe(
      'budget:tokens:project:u1:p:L',
    );
  });

  it("only the user's daily tokens are always counted", () => {
    expect(isUserDailyTokens({ scope: 'user', subject: '', period: 'daily', unit: 'tokens' })).toBe(true);
    expect(isUserDailyTokens({ scope: 'user', subject: '', period: 'daily', unit: 'cost' })).toBe(false);
    expect(isUserDailyTokens({ scope: 'api_key', subject: 'k', period: 'daily', unit: 'tokens' })).toBe(
      false,
    );
  });

  it('a budget is named by period, unit and subject', () => {
    expect(describeBudget({ scope: 'user', subject: '', period: 'daily', unit: 'tokens' })).toBe(
      'daily tokens budget of user',
    );
    expect(describeBudget({ scope: 'api_key', subject: 'k1', period: 'monthly', unit: 'cost' })).toBe(
      'monthly cost budget of API key k1',
    );
    expect(describeBudget({ scope: 'project', subject: 'p', period: 'daily', unit: 'cost' })).toBe(
      'daily cost budget of project p',
    );
  });
});
