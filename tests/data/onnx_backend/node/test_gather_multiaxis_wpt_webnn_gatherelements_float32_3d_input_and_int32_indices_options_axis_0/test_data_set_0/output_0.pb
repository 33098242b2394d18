BoutputJC²BãÖ‰Ây
šÂ´ECB