/* Recipes (widgets the model can display) and the canvas. */
#include "harness.h"

static const char *weather_recipe =
    "---\n"
    "widget: weather_card\n"
    "description: Shows the weather of a city\n"
    "schema:\n"
    "  type: object\n"
    "  properties:\n"
    "    city: {type: string}\n"
    "  required: [city]\n"
    "---\n"
    "Use it to show the weather.\n";

void test_recipes(void) {
    mcpmux_pool pool = open_pool();
    char *out = NULL;
    CHECK_STATUS(mcpmux_recipes_register(pool, weather_recipe, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"name\":\"weather_card\"");
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_recipes_register(pool, "no front matter", &out),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK(out == NULL);
    CHECK_STATUS(mcpmux_recipes_register(pool, NULL, NULL), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_recipes_list(pool, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "Shows the weather");
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_recipes_get(pool, "weather_card", &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "Use it to show the weather.");
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_recipes_get(pool, "nothing", &out), MCPMUX_ERR_NOT_FOUND);
    CHECK(out == NULL);
    CHECK_STATUS(mcpmux_recipes_search(pool, "weather city", 0, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "weather_card");
    mcpmux_string_free(out);
    /* The recipe tools are host tools. */
    CHECK_STATUS(mcpmux_tools_call(pool, "widget_display",
                                   "{\"name\": \"weather_card\", \"params\": {\"city\": \"Oslo\"}}", NULL,
                                   10000, &out),
                 MCPMUX_OK);
    CHECK_CONTAINS(out, "\"isError\":false");
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_canvas_get(pool, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "Oslo");
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_canvas_get(pool, NULL), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);
    CHECK_STATUS(mcpmux_recipes_list(pool, &out), MCPMUX_ERR_INVALID_HANDLE);
}
