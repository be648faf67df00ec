// The People page's records, as the configuration API returns them.
import type { paths } from "../../api/client.ts";

export type Person = paths["/webhooks/people"]["get"]["responses"][200]["content"][
  "application/json"
]["data"][
  number
];
export type Invitation = paths["/webhooks/invitations"]["get"]["responses"][200]["content"][
  "application/json"
][
  "data"
][number];
export type Role = Person["role"];

export const ROLE_WORDS: Record<Role, string> = {
  admin: "Admin",
  staff: "Staff",
};

/** Who a person is, in a few words: their address, else their name. */
export const personName = (p: Person): string => p.email ?? p.display_name ?? "this person";
