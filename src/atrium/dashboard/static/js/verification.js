// A domain's verification in the domains list: whether atrium serves it and, until it does, the
// TXT record to publish, why the last check failed and when it ran, and a Verify button that asks
// the API to check DNS again (POST /api/v1/domains/{id}/verify), then shows the list afresh.

import { api } from "./api.js";
import { h, timeEl, toast } from "./dom.js";

// `verification.last_error` → what it means for the owner.
const REASONS = {
  txt_missing: (d) => `No TXT record at ${d.verification.txt_name}.`,
  txt_mismatch: (d) => `The TXT records at ${d.verification.txt_name} do not hold the token.`,
  address_mismatch: (d) => `${d.name} points elsewhere than this deployment.`,
  dns_timeout: () => "No DNS server answered in time; try again.",
  dns_error: () => "DNS answered with an error; try again later.",
};

export function reasonText(domain) {
  const error = domain.verification && domain.verification.last_error;
  if (!error) return null;
  return REASONS[error] ? REASONS[error](domain) : error;
}

function refresh() {
  // The list's own URL again: recordsView renders it afresh.
  window.dispatchEvent(new HashChangeEvent("hashchange"));
}

async function verify(domain, button) {
  button.disabled = true;
  button.textContent = "Checking…";
  try {
    const { data } = await api(`/api/v1/domains/${domain.id}/verify`, { method: "POST" });
    toast(data.verified ? `${data.name} is verified` : `${data.name} is not verified: ${reasonText(data) || "not found"}`);
  } catch (error) {
    toast(error.message);
  } finally {
    refresh();
  }
}

function record(domain) {
  const { txt_name: name, txt_value: value } = domain.verification;
  return h("dl", { class: "txt-record", "aria-label": `DNS record to publish for ${domain.name}` }, [
    h("dt", {}, "Name"), h("dd", {}, h("code", {}, name)),
    h("dt", {}, "Type"), h("dd", {}, h("code", {}, "TXT")),
    h("dt", {}, "Value"), h("dd", {}, h("code", {}, value)),
  ]);
}

/** The Verification cell of a domain's row. */
export function verificationCell(domain) {
  const verification = domain.verification || {};
  const checked = verification.checked_at
    ? h("span", { class: "muted small" }, "Checked ", timeEl(verification.checked_at))
    : h("span", { class: "muted small" }, "Not checked yet");
  if (domain.verified) {
    return h("div", { class: "verification" },
      h("div", { class: "verification-head" }, h("span", { class: "badge status-completed" }, "verified"), checked));
  }
  const button = h("button", {
    type: "button", class: "secondary small", "aria-label": `Verify ${domain.name}`,
    onclick: () => verify(domain, button),
  }, "Verify");
  const reason = reasonText(domain);
  return h("div", { class: "verification" }, [
    h("div", { class: "verification-head" },
      h("span", { class: "badge status-requires_action" }, "not verified"), button),
    reason ? h("p", { class: "verification-error" }, reason, " ", checked) : h("p", {}, checked),
    verification.txt_name ? [h("p", { class: "small" }, "Publish this record, then verify:"), record(domain)] : null,
  ]);
}
