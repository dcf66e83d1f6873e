#include "model/store_a/verification_cache.hpp"

#include <algorithm>
#include <climits>

#include <openssl/x509v3.h>

namespace receiptd::model::store_a {

ossl::x509_ptr verification_cache::certificate(std::string_view der) const {
  {
    std::shared_lock lock(mutex_);
    if (auto it = certificates_.find(der); it != certificates_.end()) {
      X509_up_ref(it->second.get());
      return ossl::x509_ptr{it->second.get()};
    }
  }
  if (der.empty() || der.size() > static_cast<std::size_t>(LONG_MAX))
    return nullptr;
  auto p = reinterpret_cast<const unsigned char*>(der.data());
  ossl::x509_ptr cert{d2i_X509(nullptr, &p, static_cast<long>(der.size()))};
  if (!cert || p != reinterpret_cast<const unsigned char*>(der.data()) + der.size())
    return nullptr;
  return cert;
}

std::optional<verification_cache::chain_memo>
verification_cache::known_chain(chain_kind kind, std::string_view leaf_der, unix_ms at,
                                const std::vector<std::string_view>& embedded) const {
  std::shared_lock lock(mutex_);
  const auto& chains = chains_[static_cast<int>(kind)];
  auto it = chains.find(leaf_der);
  if (it == chains.end())
    return std::nullopt;
  const chain_memo& memo = it->second;
  if (at < memo.valid_from || at > memo.valid_until)
    return std::nullopt;
  if (memo.exact)
    return std::equal(memo.intermediates.begin(), memo.intermediates.end(), embedded.begin(),
                      embedded.end())
      ? std::optional<chain_memo>(memo)
      : std::nullopt;
  for (const auto& needed : memo.intermediates)
    if (std::find(embedded.begin(), embedded.end(), std::string_view(needed)) == embedded.end())
      return std::nullopt;
  return memo;
}

void verification_cache::remember(
  const std::vector<std::pair<std::string_view, X509*>>& certificates, chain_kind kind,
  std::string_view leaf_der, chain_memo memo) const {
  // Fill each certificate's extension cache now, before other threads share it.
  for (const auto& [der, cert] : certificates)
    X509_check_purpose(cert, -1, 0);
  std::unique_lock lock(mutex_);
  auto& chains = chains_[static_cast<int>(kind)];
  if (certificates_.size() + certificates.size() > max_entries || chains.size() >= max_entries) {
    certificates_.clear();
    for (auto& c : chains_)
      c.clear();
  }
  for (const auto& [der, cert] : certificates)
    if (certificates_.find(der) == certificates_.end()) {
      X509_up_ref(cert);
      certificates_.emplace(std::string(der), ossl::x509_ptr{cert});
    }
  chains.insert_or_assign(std::string(leaf_der), std::move(memo));
}

std::size_t verification_cache::certificate_count() const {
  std::shared_lock lock(mutex_);
  return certificates_.size();
}

} // namespace receiptd::model::store_a
