import { parseArgs } from 'node:util';
import { billLateUsage, type LateDeps, listLateUsage } from './late-usage';

const USAGE = `usage: usage-late [--user USER_ID] [--bill] [--json]
  Lists usage events held as late (they arrived after their period's invoice was
  finalized) per user and meter, with their value and what they cost at the user's
  metered price. --bill adds each priced group as an invoice item to the customer's
  next invoice (idempotent) and marks its events billed_by_hand.
  Exit 0: done; 2: bad arguments.`;

export type LateIo = { out(line: string): void; err(line: string): void };

/** Runs the command on `argv` (without node and script) and returns its exit code. */
export async function runLateCli(deps: LateDeps, argv: string[], io: LateIo): Promise<number> {
  let values: { user?: string; bill?: boolean; json?: boolean; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        user: { type: 'string' },
        bill: { type: 'boolean' },
        json: { type: 'boolean' },
        help: { type: 'boolean' },
      },
    }));
  } catch (err) {
    io.err(`${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    io.out(USAGE);
    return 0;
  }
  const groups = await listLateUsage(deps, values.user);
  const billed = values.bill ? await billLateUsage(deps, groups) : new Map();
  if (values.json) {
    io.out(
      JSON.stringify(
        groups.map((group) => {
          const { ids, ...rest } = group;
          return { ...rest, event_ids: ids, invoice_item: billed.get(group) ?? null };
        }),
        null,
        2,
      ),
    );
    return 0;
  }
  for (const g of groups) {
    const amount = g.amount === null ? 'no price' : `${g.amount} ${g.currency} (minor units)`;
    const item = billed.get(g);
    io.out(
      `LATE user=${g.user_id} meter=${g.meter} events=${g.events} value=${g.value} from=${g.first_at} to=${g.last_at} amount=${amount}${item ? ` billed=${item}` : ''}`,
    );
  }
  io.out(`${groups.length} late groups${values.bill ? `, ${billed.size} billed` : ''}`);
  return 0;
}
