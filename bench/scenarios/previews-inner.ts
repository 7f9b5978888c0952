// Entry of the `previews` scenario inside its network namespace (previews.ts).
import { runInside } from './previews.js';

await runInside(process.argv[2] as string);
