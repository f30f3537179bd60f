import type { EventStore } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** Events kept per client session for resumption; older ones are dropped first. */
const MAX_EVENTS = 1000;

/**
 * The messages sent on a session's SSE streams, so a client that lost a
 * stream resumes it with `Last-Event-ID` (Streamable HTTP resumability).
 * One per client session, in this process: a resumed stream must reach the
 * same instance (docs/mcp.md, sticky sessions). Event ids are
 * `<streamId>_<seq>`, so the stream of an id is known without a lookup.
 */
export function createSessionEventStore(): EventStore {
  const events: Array<{ id: string; streamId: string; seq: number; message: JSONRPCMessage }> = [];
  let seq = 0;
  const parse = (eventId: string) => {
    const at = eventId.lastIndexOf('_');
    return at > 0 ? { streamId: eventId.slice(0, at), seq: Number(eventId.slice(at + 1)) } : undefined;
  };
  return {
    async storeEvent(streamId, message) {
      seq += 1;
      const id = `${streamId}_${seq}`;
      events.push({ id, streamId, seq, message });
      if (events.length > MAX_EVENTS) events.shift();
      return id;
    },
    async getStreamIdForEventId(eventId) {
      return parse(eventId)?.streamId;
    },
    async replayEventsAfter(lastEventId, { send }) {
      const last = parse(lastEventId);
      if (!last) return '';
      for (const e of events) {
        if (e.streamId === last.streamId && e.seq > last.seq) await send(e.id, e.message);
      }
      return last.streamId;
    },
  };
}
