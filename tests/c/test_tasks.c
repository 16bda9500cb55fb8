/* Tools that run as tasks, served by FastMCP with fastmcp-tasks. */
#include "harness.h"

#include <unistd.h>

/* Approves what a task asks, inside the callback, recording the question. */
static void on_task_question(void *user_data, mcpmux_host_request_id request, const char *json,
                             size_t len) {
    host_log *l = user_data;
    if (strstr(json, "Approve the launch?") != NULL && len == strlen(json)) {
        atomic_fetch_add(&l->calls, 1);
    }
    mcpmux_host_request_respond(request, "{\"action\": \"accept\", \"content\": {\"ok\": true}}");
}

/* Tools that run as tasks (FastMCP with fastmcp-tasks): a call follows its task to the
 * result, the task's status messages reach the call's progress callback, a question from
 * inside the task goes to the host's handler and its answer back, and cancelling the call
 * cancels the task at the server. */
void test_tasks(void) {
    const char *python = getenv("MCPMUX_SKILLS_PYTHON");
    const char *script = getenv("MCPMUX_TASKS_SERVER");
    if (!python || !script || access(python, X_OK) != 0) {
        skip("FastMCP 4.1 with fastmcp-tasks (.deps/tasks-venv, from scripts/test-deps.sh)");
        return;
    }
    char input[1000], *out = NULL;
    mcpmux_pool pool = open_pool();
    snprintf(input, sizeof input,
             "{\"name\": \"tasks\", \"config\": {\"command\": \"%s\", \"args\": [\"%s\"]}}",
             python, script);
    CHECK_STATUS(mcpmux_servers_add(pool, input, &out), MCPMUX_OK);
    mcpmux_string_free(out);

    static progress_log l;
    progress_log_init(&l);
    CHECK_STATUS(mcpmux_tools_call_async(pool, "mcp__tasks__crunch", "{\"n\": 3}", NULL, 60000,
                                         on_progress, on_progress_done, &l, NULL),
                 MCPMUX_OK);
    CHECK(waiter_wait(&l.w, 60000));
    CHECK_STATUS(l.w.status, MCPMUX_OK);
    CHECK_CONTAINS(l.w.json, "crunched 3");
    CHECK(atomic_load(&l.progress) >= 1);
    CHECK_CONTAINS(l.last, "\"message\":\"step ");
    waiter_destroy(&l.w);

    static host_log asked;
    memset(&asked, 0, sizeof asked);
    CHECK_STATUS(mcpmux_pool_set_elicitation_handler(pool, on_task_question, &asked, on_host_free),
                 MCPMUX_OK);
    CHECK_STATUS(mcpmux_tools_call(pool, "mcp__tasks__approve", "{\"item\": \"the launch\"}",
                                   NULL, 60000, &out),
                 MCPMUX_OK);
    CHECK_CONTAINS(out, "the launch: accept");
    mcpmux_string_free(out);
    CHECK(atomic_load(&asked.calls) == 1);

    char marker[320], started[340], args[400];
    snprintf(marker, sizeof marker, "%s/task-%d", tmp_root, ++tmp_counter);
    snprintf(started, sizeof started, "%s.started", marker);
    snprintf(args, sizeof args, "{\"marker\": \"%s\"}", marker);
    waiter w;
    waiter_init(&w);
    mcpmux_request_id id = 0;
    CHECK_STATUS(mcpmux_tools_call_async(pool, "mcp__tasks__stall", args, NULL, 60000, NULL,
                                         on_complete, &w, &id),
                 MCPMUX_OK);
    for (int i = 0; i < 300 && access(started, F_OK) != 0; i++) {
        sleep_ms(50);
    }
    CHECK(access(started, F_OK) == 0);
    CHECK_STATUS(mcpmux_cancel(id), MCPMUX_OK);
    CHECK(waiter_wait(&w, 20000));
    CHECK_STATUS(w.status, MCPMUX_ERR_CANCELLED);
    waiter_destroy(&w);
    /* The server was told: its task stopped. */
    for (int i = 0; i < 200 && access(marker, F_OK) != 0; i++) {
        sleep_ms(50);
    }
    CHECK(access(marker, F_OK) == 0);
    CHECK_STATUS(mcpmux_pool_close(pool, -1), MCPMUX_OK);
}
