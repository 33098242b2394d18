
BoutputJ!ÔOÔĞÔ!ÔOÔĞÔ³ÇqNšT¥UôRQ