// `npm run docs:states`: writes docs/escrow-states.md from scripts/lib/spec/escrow-states.ts (its states and categories
// come from shared/escrow/enums.ts).
import { renderStatesDoc } from './lib/spec/escrow-states.ts';

await Deno.writeTextFile(new URL('../docs/escrow-states.md', import.meta.url), renderStatesDoc());
console.log('docs/escrow-states.md written');
