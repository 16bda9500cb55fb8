/* Resources (list, templates, read, subscribe) and prompts (list, get), blocking and
 * asynchronous. */
#include "harness.h"

void test_resources_and_prompts(void) {
    mcpmux_pool pool = open_pool();
    add_test_server(pool, "rp", "");
    char *out = NULL;
    waiter w;

    CHECK_STATUS(mcpmux_resources_list(pool, NULL, NULL, 20000, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"uri\":\"test://hello\"");
    CHECK_CONTAINS(out, "\"serverName\":\"rp\"");
    mcpmux_string_free(out);
    waiter_init(&w);
    AWAIT(&w, mcpmux_resources_list_async(pool, "rp", NULL, 20000, on_complete, &w, NULL));
    CHECK_CONTAINS(w.json, "test://info");
    waiter_destroy(&w);

    CHECK_STATUS(mcpmux_resources_templates(pool, "rp", NULL, 20000, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "test://echo/{text}");
    mcpmux_string_free(out);
    waiter_init(&w);
    AWAIT(&w, mcpmux_resources_templates_async(pool, NULL, NULL, 20000, on_complete, &w, NULL));
    CHECK_CONTAINS(w.json, "uriTemplate");
    waiter_destroy(&w);

    CHECK_STATUS(mcpmux_resources_read(pool, "rp", "test://hello", 20000, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "Hello from mcpmux-test-server");
    mcpmux_string_free(out);
    waiter_init(&w);
    AWAIT(&w, mcpmux_resources_read_async(pool, "rp", "test://echo/abc", 20000, on_complete, &w,
                                          NULL));
    CHECK_CONTAINS(w.json, "\"text\":\"abc\"");
    waiter_destroy(&w);
    CHECK_STATUS(mcpmux_resources_read(pool, "rp", "test://missing", 20000, &out),
                 MCPMUX_ERR_PROTOCOL);

    /* The test server refuses a subscription to test://secret alone: the refusal comes
     * through, naming the resource. */
    CHECK_STATUS(mcpmux_resources_subscribe(pool, "rp", "test://secret", 20000),
                 MCPMUX_ERR_PROTOCOL);
    char *refusal = mcpmux_last_error();
    CHECK_CONTAINS(refusal, "test://secret");
    mcpmux_string_free(refusal);
    waiter_init(&w);
    AWAIT(&w, mcpmux_resources_subscribe_async(pool, "rp", "test://hello", 20000, on_complete,
                                               &w, NULL));
    CHECK_STATUS(w.status, MCPMUX_OK);
    waiter_destroy(&w);
    waiter_init(&w);
    AWAIT(&w, mcpmux_resources_unsubscribe_async(pool, "rp", "test://hello", 20000, on_complete,
                                                 &w, NULL));
    CHECK_STATUS(w.status, MCPMUX_OK);
    waiter_destroy(&w);

    CHECK_STATUS(mcpmux_prompts_list(pool, NULL, NULL, 20000, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"name\":\"greet\"");
    mcpmux_string_free(out);
    waiter_init(&w);
    AWAIT(&w, mcpmux_prompts_list_async(pool, "rp", NULL, 20000, on_complete, &w, NULL));
    CHECK_CONTAINS(w.json, "greet");
    waiter_destroy(&w);
    CHECK_STATUS(mcpmux_prompts_get(pool, "rp", "greet", "{\"name\": \"C\"}", 20000, &out),
                 MCPMUX_OK);
    CHECK_CONTAINS(out, "Hello, C!");
    mcpmux_string_free(out);
    waiter_init(&w);
    AWAIT(&w, mcpmux_prompts_get_async(pool, "rp", "greet", "{\"name\": \"async\"}", 20000,
                                       on_complete, &w, NULL));
    CHECK_CONTAINS(w.json, "Hello, async!");
    waiter_destroy(&w);
    CHECK_STATUS(mcpmux_prompts_get(pool, "rp", "nope", NULL, 20000, &out), MCPMUX_ERR_PROTOCOL);
    CHECK_STATUS(mcpmux_prompts_get(pool, "nobody", "greet", NULL, 20000, &out),
                 MCPMUX_ERR_NOT_FOUND);
    CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);
}
