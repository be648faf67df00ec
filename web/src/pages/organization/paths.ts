// Where the organization's pages live (the header links to the new-organization page).
export const ORGANIZATION_PATH = "/settings/organization";
export const NEW_ORGANIZATION_PATH = "/settings/organization/new";
