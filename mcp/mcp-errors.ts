// A relay error met while serving a resource or a prompt, as the MCP error a client reads (MCP's -32002: not found).
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { RelayCallError } from './relay-client';

/** MCP's code for a resource that does not exist (specification, server/resources "Error Handling"). */
export const RESOURCE_NOT_FOUND = -32002;

const NOT_FOUND = new Set(['thread_not_found', 'not_a_participant']);

/** Runs `read`; a thread that is not there or not the caller's is "not found" (one answer for both: ids leak nothing). */
export async function asMcpError<T>(what: string, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof RelayCallError && NOT_FOUND.has(error.code)) {
      throw new McpError(RESOURCE_NOT_FOUND, `${what} not found: no thread with that id that you sent or received`);
    }
    if (error instanceof RelayCallError && error.code === 'invalid_params')
      throw new McpError(ErrorCode.InvalidParams, error.message);
    if (error instanceof RelayCallError)
      throw new McpError(ErrorCode.InternalError, error.message, { code: error.code });
    throw error;
  }
}
