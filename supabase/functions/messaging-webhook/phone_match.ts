// How a sender's number may be written in a member record without its country code. WhatsApp always
// sends the full international number; members are often typed in national format ("07911 123456" in
// the UK). libphonenumber-js (Google's metadata) tells the number's country calling code and how it is
// written nationally; the database then matches those national forms only in organizations whose
// default country (organization_settings.default_country) dials that calling code.
import { getCountries, getCountryCallingCode, parsePhoneNumberFromString } from "libphonenumber-js";

export interface NationalForms {
  /** ISO 3166-1 alpha-2 countries sharing the number's calling code (GB, GG, IM and JE for +44). */
  countries: string[];
  /** Digits-only national spellings (with and without the trunk prefix), never the international one. */
  national: string[];
}

let byCallingCode: Map<string, string[]> | undefined;

function countriesOf(callingCode: string): string[] {
  if (!byCallingCode) {
    byCallingCode = new Map();
    for (const country of getCountries()) {
      const code = getCountryCallingCode(country) as string;
      byCallingCode.set(code, [...(byCallingCode.get(code) ?? []), country]);
    }
  }
  return byCallingCode.get(callingCode) ?? [];
}

export function nationalForms(digits: string | null): NationalForms {
  if (!digits) return { countries: [], national: [] };
  const parsed = parsePhoneNumberFromString(`+${digits}`);
  if (!parsed) return { countries: [], national: [] };
  const forms = [parsed.nationalNumber as string, parsed.format("NATIONAL").replace(/\D/g, "")];
  return {
    countries: countriesOf(parsed.countryCallingCode as string),
    national: [...new Set(forms)].filter((f) => f.length >= 4 && f !== digits),
  };
}
