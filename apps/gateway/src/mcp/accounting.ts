import { randomUUID } from 'node:crypto';
import type { Logger } from '@platform/logging';
import type { Clock } from '@platform/service-kit';
import type { Budgets } from '../budgets/budgets';
import type { UsageLedger } from '../usage/ledger';
import type { LedgerRecord } from '../usage/record';

/** The `endpoint` of a tool call's ledger record; `provider` is `mcp`, `model` is `<server>/<tool>`. */
export const MCP_ENDPOINT = 'mcp';

/** Who calls which tool, known before the call. */
export type ToolCallMeta = {
  userId: string;
  apiKeyId: string;
  projectId: string;
  server: string;
  /** The server's own name of the tool. */
  tool: string;
  /** The server's price per call, micro-units of the currency. */
  priceMicros: number;
};

/** How a call ended: 200 when the server answered (a tool's own error result included). */
export type ToolCallOutcome = { status: number };

/** Makes the record durable and settles the reservation; throws when the record is not durable. */
export type FinishToolCall = (outcome: ToolCallOutcome) => Promise<void>;

export type McpAccounting = {
  /** Reserves the call's price against the caller's budgets (throws 429 rate_limited when spent). */
  begin(meta: ToolCallMeta): Promise<FinishToolCall>;
};

/**
 * Tool calls in the money flow of every other AI request: a budget
 * reservation of the server's price before the call, one ledger record
 * after it (zero tokens, the price as its cost when the server answered,
 * nothing charged when it could not be reached), shipped and billed like
 * any other record. Arguments and results are not part of the record.
 */
export function createMcpAccounting(opts: {
  ledger: UsageLedger;
  budgets: Budgets;
  currency: string;
  clock: Clock;
  logger: Logger;
}): McpAccounting {
  return {
    async begin(meta) {
      const startedAt = opts.clock();
      const reservation = await opts.budgets.reserve({
        userId: meta.userId,
        apiKeyId: meta.apiKeyId,
        projectId: meta.projectId,
        promptTokens: 0,
        completionTokens: 0,
        price: undefined,
        fixedCostMicros: meta.priceMicros,
      });
      let done: Promise<void> | null = null;
      return (outcome) => {
        done ??= (async () => {
          const now = opts.clock();
          const record: LedgerRecord = {
            requestId: randomUUID(),
            userId: meta.userId,
            apiKeyId: meta.apiKeyId,
            projectId: meta.projectId,
            endpoint: MCP_ENDPOINT,
            lane: null,
            provider: 'mcp',
            model: `${meta.server}/${meta.tool}`,
            status: outcome.status,
            promptTokens: 0,
            completionTokens: 0,
            cachedTokens: 0,
            cacheWriteTokens: 0,
            totalTokens: 0,
            costMicros: outcome.status === 200 ? meta.priceMicros : 0,
            currency: opts.currency,
            estimated: false,
            byok: false,
            latencyMs: now - startedAt,
            createdAt: now,
          };
          const [appended, settled] = await Promise.allSettled([
            opts.ledger.append(record),
            reservation.settle({ totalTokens: 0, costMicros: record.costMicros }),
          ]);
          if (settled.status === 'rejected') {
            opts.logger.error({ err: String(settled.reason) }, 'mcp call budget not settled');
          }
          if (appended.status === 'rejected') {
            opts.logger.error({ err: String(appended.reason), record }, 'mcp call record not durable');
            throw appended.reason;
          }
        })();
        return done;
      };
    },
  };
}
