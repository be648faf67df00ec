// The password rule as the settings UI states it: what Supabase Auth enforces, locally and hosted
// (supabase/config.toml's minimum_password_length; tests/config_push_test.ts holds the hosted value).
export const MIN_PASSWORD_LENGTH = 8;
export const PASSWORD_RULE = `At least ${MIN_PASSWORD_LENGTH} characters`;
