// Prints the local stack's anon key (made on first use), for `npm run build` without configuration.
import { localAnonKey } from "./local-auth/keys.ts";

console.log(await localAnonKey());
