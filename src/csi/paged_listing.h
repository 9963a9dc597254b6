// CSI list RPCs over Oxide's paged lists: collects entries page by page until the CO's
// max_entries is reached (0: everything), and hands back Oxide's page token, prefixed so that a
// token this plugin did not issue is recognised (ABORTED). Loop thread only.
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <string>

#include "backend/oxide_client.h"
#include "util/status.h"
#include "util/utf8_cut.h"

namespace oxide::csi_adapter {

inline constexpr const char* kPageTokenPrefix = "ox1.";
inline constexpr uint32_t kMaxListPage = 1000;

// The Oxide page token inside a CSI starting_token, or ABORTED for a token we did not issue.
inline StatusOr<std::string> OxidePageToken(const std::string& starting_token) {
  if (starting_token.empty()) return std::string();
  if (starting_token.rfind(kPageTokenPrefix, 0) != 0) {
    return Aborted("starting_token \"" + CutUtf8(starting_token, 128) +
                   "\" is not a token this plugin issued; list again from the start");
  }
  return starting_token.substr(std::string(kPageTokenPrefix).size());
}

template <typename Item, typename Response>
struct PagedListing {
  // Asks Oxide for one page.
  std::function<void(const backend::PageRequest&, backend::Done<backend::Page<Item>>)> list;
  // Adds an entry for `item` to the response when it belongs in the answer.
  std::function<void(const Item&, Response*)> add;
  std::function<int(const Response&)> entries;
  std::function<void(Response*, const std::string&)> set_next_token;
  std::function<void(StatusOr<Response>)> done;
};

template <typename Item, typename Response>
void ListPages(std::shared_ptr<PagedListing<Item, Response>> listing,
               std::shared_ptr<Response> response, uint32_t wanted, std::string page_token) {
  uint32_t have = static_cast<uint32_t>(listing->entries(*response));
  uint32_t remaining = wanted == 0 ? kMaxListPage : wanted - have;
  backend::PageRequest page{.limit = std::min(remaining, kMaxListPage), .page_token = page_token};
  listing->list(page, [listing, response, wanted, page_token,
                       limit = page.limit](StatusOr<backend::Page<Item>> listed) {
    if (!listed.ok()) {
      if (!page_token.empty() && listed.status().code() == StatusCode::kInvalidArgument) {
        return listing->done(Aborted("starting_token is no longer valid (" +
                                     listed.status().message() + "); list again from the start"));
      }
      return listing->done(listed.status());
    }
    for (const Item& item : listed->items)
      listing->add(item, response.get());
    bool more = listed->items.size() >= limit && listed->next_page.has_value();
    bool full = wanted != 0 && static_cast<uint32_t>(listing->entries(*response)) >= wanted;
    if (more && !full) return ListPages(listing, response, wanted, *listed->next_page);
    if (more) listing->set_next_token(response.get(), kPageTokenPrefix + *listed->next_page);
    listing->done(std::move(*response));
  });
}

}  // namespace oxide::csi_adapter
