import { exposedName, MAX_TOOL_NAME, serverOfExposed } from './names';

describe('exposed MCP tool names', () => {
  it('are <server>__<tool> when that fits', () => {
    expect(exposedName('notes', 'search')).toBe('notes__search');
    expect(serverOfExposed('notes__search')).toBe('notes');
  });

  it('are cut to 64 characters with a hash when longer, the same every time', () => {
    const tool = 'x'.repeat(80);
    const name = exposedName('notes', tool);
    expect(name).toHaveLength(MAX_TOOL_NAME);
    expect(name).toBe(exposedName('notes', tool));
    expect(name.startsWith('notes__xxx')).toBe(true);
    expect(serverOfExposed(name)).toBe('notes');
  });

  it('keep two long names with the same prefix apart', () => {
    const a = exposedName('s', `${'y'.repeat(70)}a`);
    const b = exposedName('s', `${'y'.repeat(70)}b`);
    expect(a).not.toBe(b);
  });

  it('replace characters model providers refuse, and stay distinct from the plain spelling', () => {
    const dotted = exposedName('s', 'a.b');
    expect(dotted).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    expect(dotted).not.toBe(exposedName('s', 'a_b'));
  });
});
