# The suite runs against a live bank that a test of the repository starts and seeds (a release of the
# open tier, an approved project with two built agents, a worker answering its jobs); it names them in
# these variables. Without them each test is skipped, saying so.
live <- function() {
  url <- Sys.getenv("AGENTBANK_R_URL")
  if (!nzchar(url)) skip("no live bank: AGENTBANK_R_URL is not set")
  split <- function(name) strsplit(Sys.getenv(name), ",", fixed = TRUE)[[1]]
  list(url = url, reader = split("AGENTBANK_R_READER"), team = split("AGENTBANK_R_TEAM"),
       project = Sys.getenv("AGENTBANK_R_PROJECT"), agents = split("AGENTBANK_R_AGENTS"))
}
