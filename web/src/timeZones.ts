// Time zones as people look for them: the IANA names the browser knows (Intl.supportedValuesOf), under
// their current names (Chromium's list still says Asia/Calcutta and Europe/Kiev), grouped by region.

/** Renamed zones: the old name a browser may list, and the name the tz database uses now. */
const RENAMED: Record<string, string> = {
  "Africa/Asmera": "Africa/Asmara",
  "America/Buenos_Aires": "America/Argentina/Buenos_Aires",
  "America/Catamarca": "America/Argentina/Catamarca",
  "America/Coral_Harbour": "America/Atikokan",
  "America/Cordoba": "America/Argentina/Cordoba",
  "America/Godthab": "America/Nuuk",
  "America/Indianapolis": "America/Indiana/Indianapolis",
  "America/Jujuy": "America/Argentina/Jujuy",
  "America/Louisville": "America/Kentucky/Louisville",
  "America/Mendoza": "America/Argentina/Mendoza",
  "Asia/Calcutta": "Asia/Kolkata",
  "Asia/Katmandu": "Asia/Kathmandu",
  "Asia/Rangoon": "Asia/Yangon",
  "Asia/Saigon": "Asia/Ho_Chi_Minh",
  "Atlantic/Faeroe": "Atlantic/Faroe",
  "Europe/Kiev": "Europe/Kyiv",
  "Pacific/Enderbury": "Pacific/Kanton",
  "Pacific/Ponape": "Pacific/Pohnpei",
  "Pacific/Truk": "Pacific/Chuuk",
};

export const canonicalZone = (zone: string): string => RENAMED[zone] ?? zone;

/** The browser's own time zone, which is most likely the church's. */
export const browserTimeZone = (): string =>
  canonicalZone(Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC");

/** Whether the browser can show times in `zone`. */
export function isKnownZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** A zone as a person reads it: "America/New York", "Argentina/Buenos Aires" under America. */
export const zoneLabel = (zone: string): string => zone.replaceAll("_", " ");

export interface ZoneGroup {
  region: string;
  zones: string[];
}

/** Every zone the browser knows, canonical names, by region (UTC first, alone); `extra` added if missing. */
export function zoneGroups(extra: string[] = []): ZoneGroup[] {
  const known = (Intl as unknown as { supportedValuesOf?(k: string): string[] })
    .supportedValuesOf?.("timeZone") ?? [];
  const all = new Set([...known, ...extra].filter(Boolean).map(canonicalZone));
  all.delete("UTC");
  const byRegion = new Map<string, string[]>();
  for (const z of [...all].sort()) {
    const region = z.includes("/") ? z.slice(0, z.indexOf("/")) : "Other";
    byRegion.set(region, [...(byRegion.get(region) ?? []), z]);
  }
  return [
    { region: "UTC", zones: ["UTC"] },
    ...[...byRegion].map(([region, zones]) => ({ region, zones })),
  ];
}
