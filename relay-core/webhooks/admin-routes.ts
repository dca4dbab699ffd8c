// Admin REST for webhook deliveries (behind the admin key): the dead-letter list and its re-drives.
import type express from 'express';
import type { Request } from 'express';
import { z } from 'zod';
import { RelayError, invalidParams } from '../domain/errors';
import { handleSchema } from '../domain/schemas';
import { deliveryView } from './deliveries';
import type { WebhookDeadLetters } from './delivery-processor';

const listQuery = z
  .object({
    status: z.enum(['pending', 'delivered', 'failed', 'gone', 'skipped']).default('failed'),
    handle: handleSchema.optional(),
    limit: z.coerce.number().int().min(1).max(1_000).default(100),
  })
  .strict();

/** `${event uuid}.${handle}`, or `${event uuid}.push.${config id}` for an A2A push: what GET /admin/deliveries lists as `id`. */
const deliveryIdSchema = z
  .string()
  .max(200)
  .regex(
    /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.([A-Za-z0-9._-]+@[A-Za-z0-9._-]+|push\.[A-Za-z0-9_-]{1,64})$/i,
    'must be a delivery id as listed by GET /admin/deliveries (<event id>.<handle> or <event id>.push.<config id>)',
  );

export function mountWebhookAdminRoutes(
  app: express.Express,
  deps: { deadLetters: WebhookDeadLetters; requireAdmin(req: Request): void },
): void {
  const { deadLetters, requireAdmin } = deps;

  function idParam(req: Request): string {
    const parsed = deliveryIdSchema.safeParse(req.params.id);
    if (!parsed.success) throw invalidParams(parsed.error.issues, 'path.id');
    return parsed.data;
  }

  app.get('/admin/deliveries', async (req, res) => {
    requireAdmin(req);
    const parsed = listQuery.safeParse(req.query);
    if (!parsed.success) throw invalidParams(parsed.error.issues, 'query');
    const { limit, ...filter } = parsed.data;
    res.json({ deliveries: (await deadLetters.list(filter, limit)).map(deliveryView) });
  });

  app.get('/admin/deliveries/:id', async (req, res) => {
    requireAdmin(req);
    const id = idParam(req);
    const doc = await deadLetters.get(id);
    if (!doc) throw new RelayError('not_found', `No delivery ${id}`);
    res.json(deliveryView(doc));
  });

  app.post('/admin/deliveries/redrive-all', async (req, res) => {
    requireAdmin(req);
    res.status(202).json({ redriven: await deadLetters.redriveAll() });
  });

  app.post('/admin/deliveries/:id/redrive', async (req, res) => {
    requireAdmin(req);
    const id = idParam(req);
    const doc = await deadLetters.get(id);
    if (!doc) throw new RelayError('not_found', `No delivery ${id}`);
    const redriven = await deadLetters.redrive(doc);
    if (!redriven)
      throw new RelayError(
        'invalid_transition',
        `Delivery ${id} is ${doc.status}; only failed deliveries can be re-driven`,
        { status: doc.status },
      );
    res.status(202).json(deliveryView(redriven));
  });
}
