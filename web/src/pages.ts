// The pages of Settings > Integrations, in navigation order. To add a page: make a folder
// src/pages/<name>/ with its <Name>Page.tsx (one component per file, its CSS beside it) and add an entry
// here; the navigation, the document title, focus on arrival and the admin-only guard come with it.
import type { ComponentType } from "react";
import { ApiKeysPage } from "./pages/api-keys/ApiKeysPage.tsx";
import { PaymentWebhooksPage } from "./pages/payments/PaymentWebhooksPage.tsx";
import { WebhookLogsPage } from "./pages/logs/WebhookLogsPage.tsx";
import { WebhooksPage } from "./pages/webhooks/WebhooksPage.tsx";
import { ErasePersonPage } from "./pages/erase/ErasePersonPage.tsx";
import { AuditLogPage } from "./pages/audit/AuditLogPage.tsx";
import { PlatformConsolePage } from "./pages/platform/PlatformConsolePage.tsx";

export interface PageEntry {
  path: string;
  title: string;
  Page: ComponentType;
  /** Query parameters that name one organization's rows: dropped when the organization changes. */
  orgParams?: readonly string[];
  /**
   * "platform": a page of the platform console, for platform administrators whatever organization they
   * are in (or none); listed apart, and shown only when the token says is_platform_admin.
   */
  scope?: "platform";
}

export const PAGES: readonly PageEntry[] = [
  {
    path: "/settings/integrations/webhooks",
    title: "Webhooks",
    Page: WebhooksPage,
  },
  {
    path: "/settings/integrations/webhook-logs",
    title: "Webhook Logs",
    Page: WebhookLogsPage,
    orgParams: ["endpoint", "delivery", "q"],
  },
  {
    path: "/settings/integrations/api-keys",
    title: "API keys",
    Page: ApiKeysPage,
  },
  {
    path: "/settings/integrations/payment-webhooks",
    title: "Payment webhooks",
    Page: PaymentWebhooksPage,
  },
  {
    path: "/settings/privacy/erase-person",
    title: "Erase a person",
    Page: ErasePersonPage,
  },
  {
    path: "/settings/organization/audit-log",
    title: "Audit log",
    Page: AuditLogPage,
  },
  {
    path: "/settings/platform/organizations",
    title: "Platform console",
    Page: PlatformConsolePage,
    scope: "platform",
  },
];

export const HOME = PAGES[0]!.path;
