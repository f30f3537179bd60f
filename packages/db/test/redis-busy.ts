/** A Lua script that keeps Redis busy for `ms` milliseconds (its reply comes that late), then returns 1. */
export function busyScript(ms: number): string {
  return `
local start = redis.call('TIME')
repeat
  local now = redis.call('TIME')
until (now[1] - start[1]) * 1000000 + (now[2] - start[2]) >= ${Math.round(ms * 1000)}
return 1`;
}
