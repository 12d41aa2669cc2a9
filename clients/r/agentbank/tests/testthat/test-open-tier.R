test_that("the open tier is a tibble in GSS codes with labels, the release and validity as attributes", {
  bank <- live()
  reader <- bank_connect(bank$url, bank$reader[1], bank$reader[2])
  expect_true("gss" %in% bank_instruments(reader)$key)
  items <- bank_items(reader, "gss")
  cappun <- items$options[[match("cappun", items$key)]]
  expect_equal(cappun$label[cappun$code == 1], "favor")

  table <- bank_distribution(reader, "gss", "cappun", breakdowns = "sex")
  expect_s3_class(table, "tbl_df")
  expect_equal(names(table), c("sex", "code", "label", "count", "share", "share_low", "share_high",
                               "weighted_share", "weighted_low", "weighted_high", "deff",
                               "noise_low", "noise_high", "sampling_low", "sampling_high"))
  expect_s3_class(table$code, "haven_labelled")
  expect_equal(unname(attr(table$code, "labels")[c("favor", "oppose")]), c(1L, 2L))
  expect_equal(as.character(haven::as_factor(table$code)), as.character(table$label))
  expect_match(attr(table$code, "label"), "death", ignore.case = TRUE)
  expect_true(all(table$code[table$label == "favor"] == 1))
  expect_true(is.integer(table$count))
  # A hidden group is NA, never a zero, and so are its shares.
  hidden <- is.na(table$count)
  expect_true(all(is.na(table$share[hidden])) && all(!is.na(table$share[!hidden])))
  expect_gte(attr(table, "release"), 1)
  expect_match(attr(table, "question"), "death penalty", ignore.case = TRUE)
  expect_true(is.list(attr(table, "validity")) && "items" %in% names(attr(table, "validity")))
  expect_true(is.numeric(attr(table, "protection")$mu))
  expect_match(attr(table, "weights")$source, "GSS")

  # A table the release lacks is queued for the next cut, and said so as the bank's own condition.
  queued <- tryCatch(bank_distribution(reader, "gss", "cappun", breakdowns = c("sex", "race")),
                     agentbank_error = identity)
  expect_s3_class(queued, "agentbank_error")
  expect_equal(queued$code, "table_queued")
  expect_match(conditionMessage(queued), "next cut")

  overall <- bank_distribution(reader, "gss", "cappun")
  expect_equal(names(overall)[1:2], c("code", "label"))
  expect_equal(attr(overall, "release"), attr(table, "release"))
})

test_that("a labelled file of the open tier reads back with its labels", {
  bank <- live()
  reader <- bank_connect(bank$url, bank$reader[1], bank$reader[2])
  file <- bank_download(reader, "/v1/open/instruments/gss/items/cappun/distribution", "sav")
  on.exit(unlink(file))
  table <- haven::read_sav(file)
  expect_equal(unname(attr(table$code, "labels")[["favor"]]), 1)
  expect_match(attr(table$code, "label"), "death", ignore.case = TRUE)
})

test_that("refusals are agentbank errors with the bank's status and code", {
  bank <- live()
  expect_error(bank_connect(bank$url, bank$team[1], "not-the-secret"), class = "agentbank_error")
  wrong <- tryCatch(bank_connect(bank$url, bank$team[1], "not-the-secret"), agentbank_error = identity)
  expect_equal(wrong$status, 401)
  reader <- bank_connect(bank$url, bank$reader[1], bank$reader[2])
  refused <- tryCatch(
    bank_submit(reader, bank$project, survey_request("gss", "cappun", bank$agents)),
    agentbank_error = identity)
  expect_equal(refused$status, 403)
  missing <- tryCatch(bank_distribution(reader, "gss", "no_such_item"), agentbank_error = identity)
  expect_equal(missing$status, 404)
})
