// A run that waits for its caller (requires_action): its pending calls, each with Approve /
// Deny (an MCP call that needs approval) or an output box (a function tool the caller runs),
// answered together with POST …/actions.

import { api } from "./api.js";
import { errorBox, field, h, replace, timeEl, toast } from "./dom.js";

const RUNS = "/api/v1/public/agent/runs";

// An approval of an MCP server's tool names its server; a memory tool's has none.
function toolName(call) {
  return call.server_label ? `${call.server_label}_${call.name}` : call.name;
}

function callTitle(call) {
  if (call.kind !== "approval") return `${call.name}: a function you run`;
  const where = call.server_label ? ` (MCP server ${call.server_label})` : "";
  return `${toolName(call)}${where} asks for approval`;
}

/** The panel for `run.required_action`; `onAnswered(run)` gets the queued run. */
export function actionPanel(run, onAnswered) {
  const action = run.required_action;
  const errorArea = h("div");
  const answers = new Map();
  const send = h("button", { type: "submit" }, "Send answers");

  const items = action.tool_calls.map((call) => {
    const args = h("pre", { class: "output small" }, JSON.stringify(call.arguments, null, 2));
    if (call.kind === "approval") {
      const reason = h("input", { name: `reason-${call.id}`, maxlength: 2000 });
      const approve = h("button", { type: "button", class: "secondary", "aria-pressed": "false" }, "Approve");
      const deny = h("button", { type: "button", class: "danger secondary", "aria-pressed": "false" }, "Deny");
      const choose = (approved) => {
        answers.set(call.id, { kind: "approval", approved });
        approve.setAttribute("aria-pressed", String(approved));
        deny.setAttribute("aria-pressed", String(!approved));
      };
      approve.addEventListener("click", () => choose(true));
      deny.addEventListener("click", () => choose(false));
      return h("li", { class: "pending-call", dataset: { callId: call.id } }, [
        h("h3", {}, callTitle(call)), args,
        h("div", { class: "toolbar" }, approve, deny),
        field("Reason if denied (the model reads it)", reason),
      ]);
    }
    const output = h("textarea", { name: `output-${call.id}`, rows: 3 });
    answers.set(call.id, { kind: "function", output });
    return h("li", { class: "pending-call", dataset: { callId: call.id } }, [
      h("h3", {}, callTitle(call)), args, field(`Output of ${call.name}`, output),
    ]);
  });

  const form = h("form", { class: "stack", "aria-label": "Answer the pending calls" },
    h("ol", { class: "pending-calls" }, items), errorArea, send);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = { tool_outputs: [], approvals: [] };
    for (const call of action.tool_calls) {
      const answer = answers.get(call.id);
      if (!answer) {
        replace(errorArea, h("p", { class: "error", role: "alert" },
          `Approve or deny ${toolName(call)} first.`));
        return;
      }
      if (answer.kind === "function") {
        body.tool_outputs.push({ tool_call_id: call.id, output: answer.output.value });
      } else {
        const reason = form.querySelector(`[name="reason-${CSS.escape(call.id)}"]`).value.trim();
        body.approvals.push({
          tool_call_id: call.id, approve: answer.approved,
          ...(!answer.approved && reason ? { reason } : {}),
        });
      }
    }
    send.disabled = true;
    try {
      const queued = await api(`${RUNS}/${run.run_id}/actions`, { method: "POST", json: body });
      toast("Answers sent; the run goes on");
      onAnswered(queued);
    } catch (error) {
      replace(errorArea, errorBox(error));
      send.disabled = false;
    }
  });

  return h("section", { class: "card waiting", "aria-labelledby": "waiting-title" }, [
    h("h2", { id: "waiting-title" }, "Waiting for you"),
    h("p", { class: "muted small" }, "Answer before ", timeEl(action.expires_at), ", or the run fails."),
    form,
  ]);
}
