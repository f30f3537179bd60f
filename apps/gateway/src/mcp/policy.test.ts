import {
  DEFAULT_POLICY,
  POLICY_ENTRY,
  serverAllowed,
  serverAllowedBy,
  toolAllowed,
  toolAllowedBy,
} from './policy';

const open = { name: 'notes', default_allowed: true };
const closed = { name: 'vault', default_allowed: false };

describe('MCP tool policy', () => {
  it('without a policy, a key uses the servers allowed by default and all their tools', () => {
    expect(serverAllowed(DEFAULT_POLICY, open)).toBe(true);
    expect(toolAllowed(DEFAULT_POLICY, open, 'search')).toBe(true);
    expect(serverAllowed(DEFAULT_POLICY, closed)).toBe(false);
    expect(toolAllowed(DEFAULT_POLICY, closed, 'read')).toBe(false);
  });

  it('an allow list names servers, tools and prefixes; nothing else is allowed', () => {
    const policy = { allow: ['vault/read_*', 'notes/search'], deny: [] };
    expect(toolAllowed(policy, closed, 'read_secret')).toBe(true);
    expect(toolAllowed(policy, closed, 'write_secret')).toBe(false);
    expect(toolAllowed(policy, open, 'search')).toBe(true);
    expect(toolAllowed(policy, open, 'delete')).toBe(false);
    expect(serverAllowed({ allow: ['vault'], deny: [] }, open)).toBe(false);
    expect(toolAllowed({ allow: ['vault'], deny: [] }, closed, 'anything')).toBe(true);
  });

  it('deny wins over allow and over the default', () => {
    expect(toolAllowed({ allow: null, deny: ['notes/delete'] }, open, 'delete')).toBe(false);
    expect(toolAllowed({ allow: null, deny: ['notes/delete'] }, open, 'search')).toBe(true);
    expect(toolAllowed({ allow: ['notes'], deny: ['notes/del*'] }, open, 'delete_all')).toBe(false);
    expect(serverAllowed({ allow: ['notes'], deny: ['notes'] }, open)).toBe(false);
  });

  it('entries are server, server/tool or server/prefix*', () => {
    for (const ok of ['notes', 'notes/search', 'notes/read_*', 'notes/*', 'a-b/x.y'])
      expect(POLICY_ENTRY.test(ok)).toBe(true);
    for (const bad of ['', 'Notes', 'notes/', '*', 'notes/a*b', `n/${'x'.repeat(200)}`])
      expect(POLICY_ENTRY.test(bad)).toBe(false);
  });
});

describe('a key policy and a project policy together', () => {
  it('both must allow; none at all means the default', () => {
    const key = { allow: ['notes'], deny: [] };
    const project = { allow: null, deny: ['notes/delete'] };
    expect(toolAllowedBy([key, project], open, 'search')).toBe(true);
    expect(toolAllowedBy([key, project], open, 'delete')).toBe(false);
    expect(serverAllowedBy([key], closed)).toBe(false);
    expect(serverAllowedBy([], open)).toBe(true);
    expect(serverAllowedBy([], closed)).toBe(false);
  });
});
