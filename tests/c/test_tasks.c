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

/* A pool with the FastMCP tasks server as "tasks"; 0 (after a skip) when it is not
 * installed. */
static mcpmux_pool open_tasks_pool(void) {
    const char *python = getenv("MCPMUX_SKILLS_PYTHON");
    const char *script = getenv("MCPMUX_TASKS_SERVER");
    if (!python || !script || access(python, X_OK) != 0) {
        skip("FastMCP 4.1 with fastmcp-tasks (.deps/tasks-venv, from scripts/test-deps.sh)");
        return 0;
    }
    char input[1000], *out = NULL;
    mcpmux_pool pool = open_pool();
    snprintf(input, sizeof input,
             "{\"name\": \"tasks\", \"config\": {\"command\": \"%s\", \"args\": [\"%s\"]}}",
             python, script);
    CHECK_STATUS(mcpmux_servers_add(pool, input, &out), MCPMUX_OK);
    mcpmux_string_free(out);
    return pool;
}

/* Tools that run as tasks (FastMCP with fastmcp-tasks): a call follows its task to the
 * result, the task's status messages reach the call's progress callback, a question from
 * inside the task goes to the host's handler and its answer back, and cancelling the call
 * cancels the task at the server. */
void test_tasks(void) {
    mcpmux_pool pool = open_tasks_pool();
    if (pool == 0) {
        return;
    }
    char *out = NULL;

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

/* Waits for a run's statuses until its end (`null`): how many there were, the first and the
 * last. */
static int follow(mcpmux_task_run run, char *first, char *last, size_t size) {
    int seen = 0;
    for (;;) {
        char *update = NULL;
        CHECK_STATUS(mcpmux_task_changed(run, 60000, &update), MCPMUX_OK);
        if (update == NULL || strcmp(update, "null") == 0) {
            mcpmux_string_free(update);
            return seen;
        }
        if (seen == 0) {
            snprintf(first, size, "%s", update);
        }
        snprintf(last, size, "%s", update);
        seen++;
        mcpmux_string_free(update);
    }
}

/* A call followed in the background (core's TaskRun, the one every language follows a call
 * with): its task's status as it changes, the end once the last status is told, its result,
 * given once; a run cancelled stops its task at the server; a freed run is an invalid
 * handle. */
void test_task_run(void) {
    mcpmux_pool pool = open_tasks_pool();
    if (pool == 0) {
        return;
    }
    char *out = NULL;

    mcpmux_task_run run = 0;
    CHECK_STATUS(mcpmux_task_start(pool, "mcp__tasks__crunch", "{\"n\": 3}", NULL, 60000, &run),
                 MCPMUX_OK);
    CHECK(run != 0);
    char first[400] = "", last[400] = "";
    CHECK(follow(run, first, last, sizeof first) >= 2);
    CHECK_CONTAINS(first, "\"status\":\"working\"");
    CHECK_CONTAINS(first, "\"taskId\":");
    CHECK_CONTAINS(last, "\"status\":\"completed\"");
    CHECK_STATUS(mcpmux_task_status(run, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"status\":\"completed\"");
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_task_result(run, 60000, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "crunched 3");
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_task_result(run, 60000, &out), MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK(out == NULL);
    CHECK_STATUS(mcpmux_task_free(run), MCPMUX_OK);
    CHECK_STATUS(mcpmux_task_free(run), MCPMUX_ERR_INVALID_HANDLE);
    CHECK_STATUS(mcpmux_task_status(run, &out), MCPMUX_ERR_INVALID_HANDLE);
    CHECK_STATUS(mcpmux_task_cancel(0), MCPMUX_ERR_INVALID_HANDLE);

    char marker[320], started[340], args[400];
    snprintf(marker, sizeof marker, "%s/task-run-%d", tmp_root, ++tmp_counter);
    snprintf(started, sizeof started, "%s.started", marker);
    snprintf(args, sizeof args, "{\"marker\": \"%s\"}", marker);
    CHECK_STATUS(mcpmux_task_start(pool, "mcp__tasks__stall", args, NULL, 60000, &run), MCPMUX_OK);
    CHECK_STATUS(mcpmux_task_changed(run, 60000, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"status\":\"working\"");
    mcpmux_string_free(out);
    for (int i = 0; i < 300 && access(started, F_OK) != 0; i++) {
        sleep_ms(50);
    }
    CHECK(access(started, F_OK) == 0);
    CHECK_STATUS(mcpmux_task_cancel(run), MCPMUX_OK);
    CHECK_STATUS(mcpmux_task_result(run, 20000, &out), MCPMUX_ERR_CANCELLED);
    CHECK_STATUS(mcpmux_task_free(run), MCPMUX_OK);
    /* The server was told: its task stopped. */
    for (int i = 0; i < 200 && access(marker, F_OK) != 0; i++) {
        sleep_ms(50);
    }
    CHECK(access(marker, F_OK) == 0);
    CHECK_STATUS(mcpmux_pool_close(pool, -1), MCPMUX_OK);
}
