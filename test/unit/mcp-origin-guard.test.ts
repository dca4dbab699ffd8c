// /mcp's Host and Origin policy (mcp/origin-guard.ts) and its settings (RELAY_MCP_ALLOWED_ORIGINS, RELAY_MCP_ALLOWED_HOSTS).
import { originRefusal, type McpOriginPolicy } from '../../mcp/origin-guard';
import { ConfigError, loadConfig } from '../../relay-core/ops/config';

const local: McpOriginPolicy = { publicUrl: 'http://127.0.0.1:3000', allowedOrigins: [], allowedHosts: [] };
const hosted: McpOriginPolicy = {
  publicUrl: 'https://relay.acme.example',
  allowedOrigins: ['https://app.acme.example'],
  allowedHosts: ['relay.internal'],
};

const refused = (policy: McpOriginPolicy, host: string | undefined, origin?: string) =>
  originRefusal(policy, host, origin)?.message ?? null;

test('a local relay serves programs and local pages under loopback names, and refuses any other Host or Origin', () => {
  expect(refused(local, '127.0.0.1:3000')).toBeNull();
  expect(refused(local, 'localhost:4000', 'http://localhost:5173')).toBeNull();
  expect(refused(local, '[::1]:3000', 'http://[::1]:8080')).toBeNull();
  expect(refused(local, 'evil.example.com', 'http://evil.example.com')).toMatch(
    /^Host "evil.example.com" is not this relay's: .*127\.0\.0\.1:3000/,
  );
  expect(refused(local, '127.0.0.1:3000', 'http://evil.example.com')).toMatch(
    /^Origin "http:\/\/evil.example.com" may not call \/mcp/,
  );
  expect(refused(local, '127.0.0.1:3000', 'null')).toMatch(/^Origin "null"/);
  expect(refused(local, undefined)).toMatch(/^Host ""/);
  expect(originRefusal(local, 'evil.example.com', undefined)).toMatchObject({
    code: 'forbidden',
    httpStatus: 403,
    details: { header: 'Host' },
  });
});

test('a hosted relay serves its public host, the allowed hosts and origins, and no local page', () => {
  expect(refused(hosted, 'relay.acme.example', 'https://relay.acme.example')).toBeNull();
  expect(refused(hosted, 'relay.acme.example', 'https://app.acme.example')).toBeNull();
  expect(refused(hosted, 'relay.internal:3000')).toBeNull();
  expect(refused(hosted, 'app.acme.example')).toBeNull();
  expect(refused(hosted, 'relay.acme.example', 'http://relay.acme.example')).toMatch(/^Origin/);
  expect(refused(hosted, 'relay.acme.example', 'http://localhost:5173')).toMatch(/^Origin/);
  expect(refused(hosted, 'relay.acme.example', 'https://app.acme.example.evil.example')).toMatch(/^Origin/);
  expect(refused(hosted, 'relay.acme.example.evil.example')).toMatch(/^Host/);
});

test('the allow lists are read from the environment and a bad entry is named', () => {
  const config = loadConfig({
    RELAY_MCP_ALLOWED_ORIGINS: 'https://app.acme.example, http://localhost:5173/',
    RELAY_MCP_ALLOWED_HOSTS: 'Relay.Internal',
  });
  expect(config.mcp).toMatchObject({
    allowedOrigins: ['https://app.acme.example', 'http://localhost:5173'],
    allowedHosts: ['relay.internal'],
  });
  expect(loadConfig({}).mcp).toMatchObject({ allowedOrigins: [], allowedHosts: [] });
  expect(() => loadConfig({ RELAY_MCP_ALLOWED_ORIGINS: 'https://app.acme.example/path' })).toThrow(ConfigError);
  expect(() => loadConfig({ RELAY_MCP_ALLOWED_ORIGINS: 'app.acme.example' })).toThrow(
    /RELAY_MCP_ALLOWED_ORIGINS: must be comma-separated origins/,
  );
  expect(() => loadConfig({ RELAY_MCP_ALLOWED_HOSTS: 'relay.internal:3000' })).toThrow(
    /RELAY_MCP_ALLOWED_HOSTS: must be comma-separated host names without ports/,
  );
});

test("an MCP session's idle time and the sessions per key are read from the environment, a bad value named", () => {
  expect(loadConfig({}).mcp).toMatchObject({ sessionIdleMs: 30 * 60_000, sessionsPerKey: 10 });
  expect(loadConfig({ RELAY_MCP_SESSION_IDLE: '90s', RELAY_MCP_SESSIONS_PER_KEY: '3' }).mcp).toMatchObject({
    sessionIdleMs: 90_000,
    sessionsPerKey: 3,
  });
  expect(() => loadConfig({ RELAY_MCP_SESSION_IDLE: '10ms' })).toThrow(
    /RELAY_MCP_SESSION_IDLE: must be a duration from 1s to 24h/,
  );
  expect(() => loadConfig({ RELAY_MCP_SESSIONS_PER_KEY: '0' })).toThrow(
    /RELAY_MCP_SESSIONS_PER_KEY: must be at least 1/,
  );
  expect(() => loadConfig({ RELAY_MCP_SESSIONS_PER_KEY: 'ten' })).toThrow(
    /RELAY_MCP_SESSIONS_PER_KEY: must be a whole number from 1 to 1000/,
  );
});
