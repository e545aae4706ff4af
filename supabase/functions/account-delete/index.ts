import '../../../shared/webhooks/on-write.ts';
import handler from './handler.ts';

Deno.serve(handler);
