// The bench's one HTTP client: JSON requests over keep-alive connections (node:http), used for every run.
// node:http rather than fetch because the client shares the relay's process and CPU: it should cost little.
import * as http from 'node:http';

export interface JsonResponse {
  status: number;
  body: any;
}

export interface RpcError {
  code: number;
  message: string;
  data?: { code?: string };
}

export class BenchHttpClient {
  private readonly agent: http.Agent;
  private readonly base: URL;
  private nextId = 1;

  constructor(baseUrl: string) {
    this.base = new URL(baseUrl);
    this.agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  }

  post(path: string, bearer: string, payload: unknown): Promise<JsonResponse> {
    return this.send('POST', path, bearer, payload);
  }

  send(method: 'POST' | 'PUT', path: string, bearer: string, payload: unknown): Promise<JsonResponse> {
    const body = Buffer.from(JSON.stringify(payload));
    return new Promise((resolve, reject) => {
      const req = http.request(
        {
          agent: this.agent,
          host: this.base.hostname,
          port: this.base.port,
          path,
          method,
          headers: {
            'content-type': 'application/json',
            'content-length': body.length,
            authorization: `Bearer ${bearer}`,
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            try {
              resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) });
            } catch {
              reject(new Error(`${method} ${path}: HTTP ${res.statusCode} answered non-JSON: ${text.slice(0, 200)}`));
            }
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  /** One JSON-RPC call to /a2a: the result, or the error object the relay answered. */
  async rpc(apiKey: string, method: string, params: unknown): Promise<{ result?: any; error?: RpcError }> {
    const { status, body } = await this.post('/a2a', apiKey, { jsonrpc: '2.0', id: this.nextId++, method, params });
    if (body?.error) return { error: body.error as RpcError };
    if (status !== 200 || body?.result === undefined)
      throw new Error(`${method}: HTTP ${status} ${JSON.stringify(body).slice(0, 300)}`);
    return { result: body.result };
  }

  /** Like rpc, but any error answer is a failure of the bench. */
  async call(apiKey: string, method: string, params: unknown): Promise<any> {
    const { result, error } = await this.rpc(apiKey, method, params);
    if (error) throw new Error(`${method} answered ${error.data?.code ?? error.code}: ${error.message}`);
    return result;
  }

  close(): void {
    this.agent.destroy();
  }
}
