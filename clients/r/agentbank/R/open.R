# The open tier: the instruments it publishes, their items, and a release's tables as tibbles in the
# instrument's codes (GSS codes for the GSS) with their labels.

FIGURES <- c("count", "share", "share_low", "share_high", "weighted_share", "weighted_low",
             "weighted_high", "deff")

#' The instruments the open tier publishes: key, title, version, number of items.
#' @param bank A connection from [bank_connect()].
#' @export
bank_instruments <- function(bank) {
  rows <- bank_json(bank, "/v1/open/instruments")
  tibble::tibble(key = pluck(rows, "key"), title = pluck(rows, "title"),
                 version = pluck(rows, "version"), items = pluck(rows, "items", as.integer))
}

#' An instrument's items: key, question, kind, and the options (a tibble of code and label) of each.
#' @param bank A connection from [bank_connect()].
#' @param instrument "gss", "ipip50" or "games".
#' @export
bank_items <- function(bank, instrument) {
  rows <- bank_json(bank, paste0("/v1/open/instruments/", instrument, "/items"))
  options <- lapply(rows, function(row) {
    tibble::tibble(code = pluck(row$options, "code", as.integer), label = pluck(row$options, "label"))
  })
  tibble::tibble(key = pluck(rows, "key"), question = pluck(rows, "question"),
                 kind = pluck(rows, "kind"), options = options)
}

#' The current release's table of an item, overall or by one or two breakdowns.
#'
#' One row per group and answer code. `code` is a labelled vector (haven's `labelled`, as gssr gives
#' GSS variables), `label` the code's label as a factor in the item's order; `count` carries the
#' release's noise and is `NA` where the group is hidden (never a zero), as are its shares. The
#' release, the question, the item's measured validity, its distance from the GSS's own distribution
#' (`fidelity`), the weights' source, the release's protection and the agents with no answer are
#' attributes of the tibble (`attr(table, "release")`, ...).
#'
#' @param bank A connection from [bank_connect()].
#' @param instrument,item The instrument's key and the item's key (a GSS mnemonic).
#' @param breakdowns Up to two of the bank's breakdowns, e.g. c("sex", "age_band").
#' @export
bank_distribution <- function(bank, instrument, item, breakdowns = character()) {
  path <- paste0("/v1/open/instruments/", instrument, "/items/", item, "/distribution")
  query <- if (length(breakdowns)) list(breakdowns = paste(breakdowns, collapse = ",")) else list()
  body <- bank_json(bank, path, query)
  if (identical(body$status, "queued")) {  # a table the release lacks: measured at the next cut
    bank_error(202L, "table_queued", paste0(body$note, " (release ", body$release, "; next cut on or after ",
                                            body$next_cut_after, ")"))
  }
  cells <- body$cells
  groups <- lapply(body$breakdowns, function(b) vapply(cells, function(c) c$group[[b]], ""))
  names(groups) <- unlist(body$breakdowns)
  deff <- stats::setNames(pluck(body$groups, "deff", as.numeric),
                          vapply(body$groups, function(g) paste(unlist(g$group), collapse = "\r"), ""))
  key <- vapply(cells, function(c) paste(unlist(c$group), collapse = "\r"), "")
  interval <- function(field, end) {
    vapply(cells, function(c) if (is.null(c[[field]])) NA_real_ else as.numeric(c[[field]][[end]]), 0)
  }
  codes <- pluck(cells, "code", as.integer)
  labels <- pluck(cells, "label")
  ordered <- !duplicated(codes)
  value_labels <- stats::setNames(codes[ordered], labels[ordered])
  count <- pluck(cells, "count", as.integer)
  table <- tibble::as_tibble(c(groups, list(
    code = haven::labelled(codes, value_labels, label = body$question),
    label = factor(labels, levels = unique(labels[ordered])),
    count = count,
    share = pluck(cells, "share", as.numeric),
    share_low = interval("interval", 1), share_high = interval("interval", 2),
    weighted_share = pluck(cells, "weighted_share", as.numeric),
    weighted_low = interval("weighted_interval", 1), weighted_high = interval("weighted_interval", 2),
    deff = ifelse(is.na(count), NA_real_, unname(deff[key])),
    noise_low = interval("noise_interval", 1), noise_high = interval("noise_interval", 2),
    sampling_low = interval("sampling_interval", 1), sampling_high = interval("sampling_interval", 2)
  )))
  for (name in c("release", "question", "k", "total", "validity", "weights", "missing",
                 "protection", "fidelity")) {
    attr(table, name) <- body[[name]]
  }
  table
}
