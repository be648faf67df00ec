// For staff, on the cards that say a page is for administrators: where their own work is. The church
// app's address when this build knows it (VITE_CHURCH_APP_URL), else where to ask for it.
import { CHURCH_APP_URL } from "../config.ts";

export function ChurchAppNote() {
  return CHURCH_APP_URL
    ? (
      <p>
        Your own work (members, attendance, giving) is in the church app:{" "}
        <a href={CHURCH_APP_URL}>open the church app</a>.
      </p>
    )
    : (
      <p>
        Your own work (members, attendance, giving) is in the church app, not here: the administrator who
        invited you can give you its address.
      </p>
    );
}
