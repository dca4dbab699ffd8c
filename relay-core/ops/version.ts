// The relay's version, as package.json says (test/integration/home-page.test.ts checks they agree): the home page,
// the A2A agent card and the MCP server report it.
export const RELAY_VERSION = '0.1.0';
